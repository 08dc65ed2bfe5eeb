// load_dataset for the chunked layout, in one process (readers.h): the single share of one
// rank (read_dataset_shard(dir, 0, 1)) turned into a Dataset, so that `partita partition`
// without mpirun, and everything that compares against it, reads the same input as the
// distributed path. Memory is the listed edges (16 bytes each) plus the graph built from them,
// and the features widened to float32: for graphs one host can hold.
#include <algorithm>

#include "partita/core/error.h"
#include "partita/core/half.h"
#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"
#include "partita/data/shard.h"
#include "readers.h"

namespace partita::data {
namespace {

constexpr int64_t kPairBatch = int64_t{1} << 20;
constexpr int64_t kRowBatch = int64_t{1} << 16;

// All rows of `f` as an owned float32 matrix (empty when the type has no features).
FeatureMatrix widen_all(const ShardFeatures& f, int64_t rows) {
  if (f.dim == 0) return {};
  std::vector<float> values(static_cast<size_t>(rows * f.dim));
  std::vector<unsigned char> stored(static_cast<size_t>(kRowBatch * f.dim) * dtype_size(f.dtype));
  for (int64_t b = 0; b < rows; b += kRowBatch) {
    const int64_t e = std::min(rows, b + kRowBatch);
    f.read(b, e, stored.data());
    widen_to_floats(stored.data(), (e - b) * f.dim, f.dtype, values.data() + b * f.dim);
  }
  return FeatureMatrix::owned(std::move(values), rows, f.dim);
}

}  // namespace

Dataset read_chunked_dataset(const std::string& dir, const LoadOptions& options, LoadStats& stats) {
  Stopwatch watch;
  DatasetShard s = read_dataset_shard(dir, 0, 1);
  Dataset ds;
  ds.num_nodes = s.num_nodes;
  ds.num_classes = s.num_classes;
  ds.labels = std::move(s.labels);
  ds.train_idx = std::move(s.train_idx);
  ds.valid_idx = std::move(s.valid_idx);
  ds.test_idx = std::move(s.test_idx);
  ds.node_arrays = std::move(s.node_arrays);
  stats.read_edges_s += watch.seconds();

  watch.restart();
  const std::string source = dir + "/manifest.json";
  if (s.hetero) {
    check_hetero_options(options);
    ds.hetero = std::move(s.hetero);
    HeteroSchema& schema = *ds.hetero;
    // Each relation's edges back to interleaved type-local pairs, in listed order.
    std::vector<std::vector<int64_t>> pairs(static_cast<size_t>(schema.num_relations()));
    for (size_t i = 0; i < s.src.size(); ++i) {
      const Relation& rel = schema.relations[s.edge_relation[i]];
      pairs[s.edge_relation[i]].push_back(s.src[i] - schema.node_types[rel.src_type].offset);
      pairs[s.edge_relation[i]].push_back(s.dst[i] - schema.node_types[rel.dst_type].offset);
    }
    std::vector<int64_t>().swap(s.src);
    std::vector<int64_t>().swap(s.dst);
    std::vector<RelationEdges> edges;
    for (int r = 0; r < schema.num_relations(); ++r)
      edges.push_back({pairs[r].data(), static_cast<int64_t>(pairs[r].size() / 2),
                       source + " (relation " + schema.triplet(r) + ")", false});
    // The arrays' rows are the listing's: relations end to end, as the pairs regrouped above.
    build_hetero_graph(ds, edges, options, s.edge_arrays);
    stats.build_graph_s += watch.seconds();
    watch.restart();
    for (size_t t = 0; t < schema.node_types.size(); ++t)
      schema.node_types[t].features = widen_all(s.type_features[t], schema.node_types[t].count);
  } else {
    PARTITA_CHECK_PARAM(options.reverse_relations, "reverse_relations",
                        "{} is a homogeneous dataset, without relations to reverse", dir);
    if (!s.edge_arrays.empty()) {  // data/edge_arrays.h's row order, as the numpy layout's
      build_keyed_graph(ds, s.src, s.dst, s.edge_arrays, options.undirected, options.threads);
      stats.build_graph_s += watch.seconds();
      watch.restart();
      ds.features = widen_all(s.features, ds.num_nodes);
      stats.read_features_s += watch.seconds();
      return ds;
    }
    const std::vector<int64_t>& src = s.src;
    const std::vector<int64_t>& dst = s.dst;
    const graph::EdgeStream stream = [&](const graph::EdgeVisitor& visit) {
      std::vector<int64_t> batch;
      for (size_t b = 0; b < src.size(); b += kPairBatch) {
        const size_t e = std::min(src.size(), b + kPairBatch);
        batch.resize(2 * (e - b));
        for (size_t i = b; i < e; ++i) {
          batch[2 * (i - b)] = src[i];
          batch[2 * (i - b) + 1] = dst[i];
        }
        visit(batch.data(), static_cast<int64_t>(e - b));
      }
    };
    graph::InEdgeOptions graph_options;
    graph_options.undirected = options.undirected;
    graph_options.threads = options.threads;
    graph_options.source = source;
    set_graph(ds, graph::build_in_edges(ds.num_nodes, stream, graph_options));
    stats.build_graph_s += watch.seconds();
    watch.restart();
    ds.features = widen_all(s.features, ds.num_nodes);
  }
  stats.read_features_s += watch.seconds();
  return ds;
}

}  // namespace partita::data
