#pragma once
// Model han's metapaths (issue 28) as the training layer uses them: resolved from
// `metapaths` (ModelOptions::metapaths; syntax and default in sample/metapath_spec.h)
// against the partition's schema, the fanouts resolved against their names, and the
// sampler every pass of a node task (training, cache warm-up, sampled evaluation) samples
// through: a sample::MetapathSampler over the session's sampler, whose blocks have one
// edge type per metapath (Block::etypes = metapath index) and only target-type nodes.
//
// The HAN adapter takes its metapath count (its number of edge types) from
// resolve_metapaths(context.options, graph.typed_meta()).size().
#include <memory>
#include <string>
#include <vector>

#include "partita/partition/format.h"
#include "partita/runtime/session.h"
#include "partita/sample/fanouts.h"
#include "partita/sample/metapath_sampler.h"
#include "partita/sample/metapath_spec.h"
#include "partita/store/dist_graph.h"
#include "partita/train/train_options.h"

namespace partita::train {

// options.model.metapaths resolved against `meta` (empty text: the default). Pure; the same
// result on every rank. Throws ParameterError("metapaths", ...).
std::vector<sample::Metapath> resolve_metapaths(const TrainOptions& options,
                                                const partition::TypedMeta& meta);

// Whether two `metapaths` texts name the same metapaths on `meta`: the same relations, path
// by path, in the same order (an empty text: the default; types or relations, canonical or
// short names, alike). Throws ParameterError("metapaths", ...) for a text that does not
// resolve.
bool same_metapaths(const std::string& a, const std::string& b, const partition::TypedMeta& meta);

// `spec` (the `fanouts` text) resolved for `model`: model han names metapaths where R-GCN
// names relations (relations[h] has one fanout per metapath); other models as
// train::resolve_fanouts (trainer.h). Throws ParameterError("fanouts" or "metapaths").
sample::Fanouts resolve_model_fanouts(const std::string& spec, const store::DistGraph& graph,
                                      const ModelOptions& model);

// The sampler of the passes of a node task: for model han a MetapathSampler over
// session.sampler() (which it borrows: the session must outlive it), else session.sampler()
// itself. sample_hop may be called from several threads at once.
class TaskSampler {
 public:
  // Throws ParameterError("metapaths", ...) for model han on an untyped partition or bad
  // metapaths.
  TaskSampler(runtime::Session& session, const TrainOptions& options);

  sample::NeighborSampler& get() {
    if (metapath_) return *metapath_;
    return session_.sampler();
  }

 private:
  runtime::Session& session_;
  std::unique_ptr<sample::MetapathSampler> metapath_;
};

}  // namespace partita::train
