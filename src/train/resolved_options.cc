// See resolved_options.h.
#include "resolved_options.h"

#include <string>
#include <utility>
#include <vector>

#include "partita/core/error.h"
#include "partita/sample/fanout_spec.h"

namespace partita::train {

TrainOptions resolved_options(const store::DistGraph& graph, TrainOptions options) {
  nn::GnnOptions& m = options.model;
  if (m.in_dim <= 0) m.in_dim = graph.feat_dim();
  // Link prediction: the output layer gives the node embeddings, as wide as the hidden ones.
  if (m.out_dim <= 0) m.out_dim = options.task == Task::kLink ? m.hidden : graph.num_classes();
  if (!options.fanout_spec.empty()) {
    std::vector<std::string> names;
    if (graph.typed())
      for (const partition::TypedRelation& r : graph.typed_meta().relations)
        names.push_back(r.name);
    sample::ResolvedFanouts resolved = sample::resolve_fanouts(options.fanout_spec, names);
    options.fanouts = std::move(resolved.fanouts);
    options.relation_fanouts = std::move(resolved.relation_fanouts);
  }
  if (!options.relation_fanouts.empty()) {
    PARTITA_CHECK(options.relation_fanouts.size() == options.fanouts.size(), Error,
                  "internal: {} hops of relation fanouts for {} fanouts",
                  options.relation_fanouts.size(), options.fanouts.size());
  }
  return options;
}

}  // namespace partita::train
