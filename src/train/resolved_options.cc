// See resolved_options.h.
#include "resolved_options.h"

#include <vector>

#include "partita/core/parameter_error.h"
#include "partita/train/metapaths.h"

namespace partita::train {

TrainOptions resolved_options(const store::DistGraph& graph, TrainOptions options) {
  ModelOptions& m = options.model;
  if (m.in_dim <= 0) m.in_dim = graph.feat_dim();
  if (options.loader.edge_features) {
    PARTITA_CHECK_PARAM(!graph.typed(), "edge_features",
                        "{} is a typed (heterogeneous) partition: edge features of typed "
                        "partitions are not yet supported",
                        graph.dir());
    PARTITA_CHECK_PARAM(graph.has_edge_features(), "edge_features",
                        "{} holds no edge features (partition a dataset with edge_feat.npy, "
                        "e.g. from `generate --edge-feat-dim D`)",
                        graph.dir());
    m.edge_dim = graph.edge_feat_dim();
  }
  // Link prediction: the output layer gives the node embeddings, as wide as the hidden ones.
  if (m.out_dim <= 0) m.out_dim = options.task == Task::kLink ? m.hidden : graph.num_classes();
  // Fanouts per relation must fit the graph (train::resolve_fanouts gives such fanouts).
  const sample::Fanouts& fanouts = options.loader.fanouts;
  if (fanouts.per_relation()) {
    PARTITA_CHECK_PARAM(fanouts.relations.size() == fanouts.num_hops(), "fanouts",
                        "{} hops of relation fanouts for {} hops", fanouts.relations.size(),
                        fanouts.num_hops());
  }
  if (graph.typed()) {
    // Model han samples metapaths: its per-hop fanouts are per metapath.
    const bool han = m.kind == ModelKind::kHan;
    const int expected =
        han ? static_cast<int>(resolve_metapaths(options, graph.typed_meta()).size())
            : graph.typed_meta().num_relations();
    for (const std::vector<int64_t>& hop : fanouts.relations) {
      PARTITA_CHECK_PARAM(hop.empty() || static_cast<int>(hop.size()) == expected, "fanouts",
                          "a hop gives fanouts for {} {}, the graph has {}", hop.size(),
                          han ? "metapaths" : "relations", expected);
    }
  }
  return options;
}

}  // namespace partita::train
