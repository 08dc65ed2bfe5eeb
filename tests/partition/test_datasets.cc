#include "test_datasets.h"

#include "partita/core/random.h"
#include "partita/graph/csr.h"

namespace partita::testing {

data::Dataset dataset_from_pairs(int64_t num_nodes, const std::vector<int64_t>& pairs,
                                 int64_t feat_dim, int64_t num_classes) {
  data::Dataset ds;
  ds.path = "memory";
  ds.layout = "numpy";
  ds.num_nodes = num_nodes;
  graph::InEdgeResult g = graph::build_in_edges(num_nodes, graph::edge_stream_of(pairs),
                                                {/*undirected=*/false, /*threads=*/1, "pairs"});
  ds.in_edges = std::move(g.in_edges);
  ds.input_edges = g.input_edges;
  std::vector<float> feat(static_cast<size_t>(num_nodes * feat_dim));
  for (int64_t v = 0; v < num_nodes; ++v)
    for (int64_t c = 0; c < feat_dim; ++c) feat[v * feat_dim + c] = feature(v, c);
  ds.features = data::FeatureMatrix::owned(std::move(feat), num_nodes, feat_dim);
  ds.num_classes = num_classes;
  for (int64_t v = 0; v < num_nodes; ++v) {
    ds.labels.push_back(v % num_classes);
    if (v % 10 == 0) ds.train_idx.push_back(v);
    if (v % 10 == 1) ds.valid_idx.push_back(v);
    if (v % 10 == 2 || v % 10 == 3) ds.test_idx.push_back(v);
  }
  return ds;
}

data::Dataset planted_dataset(const PlantedOptions& o) {
  Rng rng(stream_key(o.seed));
  const int64_t n = o.num_nodes;
  std::vector<int64_t> pairs;
  for (int64_t v = 0; v < n; ++v) {
    for (int k = 0; k < o.intra_degree; ++k) {
      int64_t u = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n)));
      if (rng.uniform() >= o.inter_fraction)
        u = u - u % o.clusters + v % o.clusters;  // same cluster
      if (u >= n) u -= o.clusters;
      pairs.push_back(v);
      pairs.push_back(u);
      if (o.undirected) {
        pairs.push_back(u);
        pairs.push_back(v);
      }
    }
  }
  return dataset_from_pairs(n, pairs, o.feat_dim, o.num_classes);
}

}  // namespace partita::testing
