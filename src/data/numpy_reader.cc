// Reader of the Partita numpy layout (docs/dataset-format.md). Nothing large is copied:
// edges.npy is streamed to the graph builder from its mapping in chunks whose pages are
// dropped after use, and feat.npy stays mapped.
#include <algorithm>
#include <cmath>

#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "partita/core/timer.h"
#include "readers.h"

namespace partita::data {
namespace {

constexpr int64_t kEdgeChunkPairs = int64_t{1} << 20;
constexpr int64_t kFeatureChunkValues = int64_t{1} << 22;

std::vector<int64_t> read_split(const std::string& path, int64_t num_nodes) {
  NpyArray array = NpyArray::open(path);
  array.expect(DType::kInt64, 1);
  ArrayView<const int64_t> v = array.view<int64_t>();
  std::vector<int64_t> ids(v.begin(), v.end());
  validate_split(ids, num_nodes, path, /*lines=*/false);
  return ids;
}

}  // namespace

void check_finite(const FeatureMatrix& features, const std::string& path, int threads) {
  const int64_t rows = features.rows(), cols = features.cols();
  const int64_t chunk_rows = std::max<int64_t>(1, kFeatureChunkValues / cols);
  const int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  std::vector<int64_t> first_bad(static_cast<size_t>(chunks), -1);
  const float* data = features.data();
  parallel_chunks(0, rows, chunk_rows, resolve_threads(threads), [&](int64_t b, int64_t e) {
    for (int64_t i = b * cols; i < e * cols; ++i) {
      if (!std::isfinite(data[i])) {
        first_bad[b / chunk_rows] = i;
        break;
      }
    }
    features.release_rows(b, e);
  });
  for (int64_t i : first_bad) {
    if (i < 0) continue;
    throw FormatError(fmt::format("{}: row {} column {}: value {} is not finite", path, i / cols,
                                  i % cols, data[i]));
  }
}

Dataset read_numpy_dataset(const std::string& dir, const LoadOptions& options, LoadStats& stats) {
  const std::string feat_path = dir + "/feat.npy";
  const std::string label_path = dir + "/label.npy";
  const std::string edge_path = dir + "/edges.npy";
  Dataset ds;

  Stopwatch watch;
  NpyArray feat = NpyArray::open(feat_path);
  feat.expect(DType::kFloat32, 2);
  const int64_t num_nodes = feat.dim(0);
  PARTITA_CHECK(num_nodes > 0, FormatError, "{}: no rows (the dataset has no nodes)", feat_path);
  PARTITA_CHECK(feat.dim(1) > 0, FormatError, "{}: shape {} has no feature columns", feat_path,
                feat.header().shape_string());
  ds.num_nodes = num_nodes;

  NpyArray label = NpyArray::open(label_path);
  label.expect(DType::kInt64, 1);
  PARTITA_CHECK(label.dim(0) == num_nodes, FormatError, "{}: {} labels, but {} has {} rows",
                label_path, label.dim(0), feat_path, num_nodes);
  ArrayView<const int64_t> label_view = label.view<int64_t>();
  ds.labels.assign(label_view.begin(), label_view.end());
  ds.num_classes = validate_labels(ds.labels, label_path);
  ds.train_idx = read_split(dir + "/train_idx.npy", num_nodes);
  ds.valid_idx = read_split(dir + "/valid_idx.npy", num_nodes);
  ds.test_idx = read_split(dir + "/test_idx.npy", num_nodes);
  ds.edge_split = read_numpy_edge_split(dir, num_nodes);
  stats.read_rest_s += watch.seconds();

  watch.restart();
  NpyArray edges = NpyArray::open(edge_path);
  edges.expect(DType::kInt64, 2);
  PARTITA_CHECK(edges.dim(1) == 2, FormatError, "{}: expected shape (E, 2), found {}", edge_path,
                edges.header().shape_string());
  const int64_t num_edges = edges.dim(0);
  if (num_edges == 0) throw_no_edges(edge_path);
  const int64_t* pairs = edges.view<int64_t>().data();
  graph::EdgeStream stream = [&](const graph::EdgeVisitor& visit) {
    for (int64_t b = 0; b < num_edges; b += kEdgeChunkPairs) {
      const int64_t n = std::min(kEdgeChunkPairs, num_edges - b);
      visit(pairs + 2 * b, n);
      edges.release_elements(2 * b, 2 * (b + n));
    }
  };
  graph::InEdgeOptions graph_options;
  graph_options.undirected = options.undirected;
  graph_options.threads = options.threads;
  graph_options.source = edge_path;
  set_graph(ds, graph::build_in_edges(num_nodes, stream, graph_options));
  stats.build_graph_s += watch.seconds();

  watch.restart();
  ds.features = FeatureMatrix::mapped(std::move(feat));
  check_finite(ds.features, feat_path, options.threads);
  stats.read_features_s += watch.seconds();
  return ds;
}

}  // namespace partita::data
