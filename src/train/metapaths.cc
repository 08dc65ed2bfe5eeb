#include "partita/train/metapaths.h"

#include <algorithm>

#include "partita/core/parameter_error.h"
#include "partita/sample/fanout_spec.h"
#include "partita/train/trainer.h"

namespace partita::train {

std::vector<sample::Metapath> resolve_metapaths(const TrainOptions& options,
                                                const partition::TypedMeta& meta) {
  return sample::resolve_metapaths(options.model.metapaths, meta);
}

bool same_metapaths(const std::string& a, const std::string& b, const partition::TypedMeta& meta) {
  const std::vector<sample::Metapath> x = sample::resolve_metapaths(a, meta);
  const std::vector<sample::Metapath> y = sample::resolve_metapaths(b, meta);
  return std::equal(x.begin(), x.end(), y.begin(), y.end(),
                    [](const sample::Metapath& p, const sample::Metapath& q) {
                      return p.relations == q.relations;
                    });
}

sample::Fanouts resolve_model_fanouts(const std::string& spec, const store::DistGraph& graph,
                                      const ModelOptions& model) {
  if (model.kind != ModelKind::kHan) return resolve_fanouts(spec, graph);
  PARTITA_CHECK_PARAM(graph.typed(), "model",
                      "han needs a typed (heterogeneous) partition; {} is homogeneous",
                      graph.dir());
  const std::vector<std::string> names =
      sample::metapath_names(sample::resolve_metapaths(model.metapaths, graph.typed_meta()));
  try {
    return sample::resolve_fanouts(spec, names);
  } catch (const ParameterError& e) {
    // The fanout syntax speaks of relations; for han its names are metapaths.
    if (e.parameter() != "fanouts") throw;
    throw ParameterError("fanouts", e.detail() +
                                        " (`model` han: a hop names metapaths, not "
                                        "relations)");
  }
}

TaskSampler::TaskSampler(runtime::Session& session, const TrainOptions& options)
    : session_(session) {
  if (options.model.kind != ModelKind::kHan) return;
  const store::DistGraph& graph = session.graph();
  PARTITA_CHECK_PARAM(graph.typed(), "model",
                      "han needs a typed (heterogeneous) partition; {} is homogeneous",
                      graph.dir());
  metapath_ = std::make_unique<sample::MetapathSampler>(
      session.sampler(), resolve_metapaths(options, graph.typed_meta()),
      graph.typed_meta().num_relations());
}

}  // namespace partita::train
