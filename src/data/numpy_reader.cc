// Reader of the Partita numpy layout (docs/dataset-format.md). Nothing large is copied:
// edges.npy is streamed to the graph builder from its mapping in chunks whose pages are
// dropped after use (int32 edges and edge_index.npy through a one-chunk buffer), and
// feat.npy stays mapped. Fortran-order files are the exception: NpyArray copies them.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "numpy_files.h"
#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "partita/core/timer.h"
#include "readers.h"

namespace partita::data {
namespace {

constexpr int64_t kEdgeChunkPairs = int64_t{1} << 20;
constexpr int64_t kFeatureChunkValues = int64_t{1} << 22;

// Streams the edges of `file` as (src, dst) int64 pairs: edges.npy int64 [E, 2] straight from
// its mapping; int32 and edge_index.npy [2, E] converted chunk by chunk into a buffer of one
// chunk (never a copy of the whole list). Each chunk's pages are dropped after use.
template <class T>
graph::EdgeStream edge_stream(const NpyArray& edges, bool edge_index, int64_t num_edges) {
  return [&edges, edge_index, num_edges](const graph::EdgeVisitor& visit) {
    const T* data = edges.view<T>().data();
    std::vector<int64_t> pairs;
    for (int64_t b = 0; b < num_edges; b += kEdgeChunkPairs) {
      const int64_t n = std::min(kEdgeChunkPairs, num_edges - b);
      if constexpr (std::is_same_v<T, int64_t>) {
        if (!edge_index) {
          visit(data + 2 * b, n);
          edges.release_elements(2 * b, 2 * (b + n));
          continue;
        }
      }
      pairs.resize(static_cast<size_t>(2 * n));
      for (int64_t i = 0; i < n; ++i) {
        pairs[2 * i] = edge_index ? data[b + i] : data[2 * (b + i)];
        pairs[2 * i + 1] = edge_index ? data[num_edges + b + i] : data[2 * (b + i) + 1];
      }
      visit(pairs.data(), n);
      if (edge_index) {
        edges.release_elements(b, b + n);
        edges.release_elements(num_edges + b, num_edges + b + n);
      } else {
        edges.release_elements(2 * b, 2 * (b + n));
      }
    }
  };
}

// A label -1 marks an unlabelled node; such a node must be in no split.
void check_split_labels(const Dataset& ds, const std::string& label_path,
                        const NumpyLayoutFiles& files) {
  const std::vector<int64_t>* splits[] = {&ds.train_idx, &ds.valid_idx, &ds.test_idx};
  for (int s = 0; s < 3; ++s) {
    for (int64_t v : *splits[s]) {
      PARTITA_CHECK(ds.labels[v] >= 0, FormatError,
                    "{}: node {} has label -1 (unlabelled) but is in the {} split ({}); a node "
                    "in a split needs a label",
                    label_path, v, files.splits[s].name, files.splits[s].path);
    }
  }
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
  const NumpyLayoutFiles files = find_numpy_files(dir);
  const std::string& feat_path = files.feat;
  const std::string& label_path = files.label;
  const std::string& edge_path = files.edges;
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
  ds.num_classes = validate_labels(ds.labels, label_path, Unlabelled::kAllowed);
  ds.train_idx = read_numpy_split(files.splits[0], num_nodes, feat_path);
  ds.valid_idx = read_numpy_split(files.splits[1], num_nodes, feat_path);
  ds.test_idx = read_numpy_split(files.splits[2], num_nodes, feat_path);
  check_split_labels(ds, label_path, files);
  ds.edge_split = read_numpy_edge_split(dir, num_nodes);
  stats.read_rest_s += watch.seconds();

  watch.restart();
  NpyArray edges = NpyArray::open(edge_path);
  PARTITA_CHECK(edges.dtype() == DType::kInt64 || edges.dtype() == DType::kInt32, FormatError,
                "{}: expected dtype int64 (or int32), found {}", edge_path,
                dtype_name(edges.dtype()));
  PARTITA_CHECK(edges.ndim() == 2, FormatError, "{}: expected 2 dimension(s), found shape {}",
                edge_path, edges.header().shape_string());
  if (files.edge_index) {
    PARTITA_CHECK(edges.dim(0) == 2, FormatError,
                  "{}: expected shape (2, E) (PyG's edge_index: sources, then destinations), "
                  "found {}",
                  edge_path, edges.header().shape_string());
  } else {
    PARTITA_CHECK(
        edges.dim(1) == 2, FormatError, "{}: expected shape (E, 2), found {}{}", edge_path,
        edges.header().shape_string(),
        edges.dim(0) == 2 ? " (a PyG edge_index of shape (2, E) goes in edge_index.npy)" : "");
  }
  const int64_t num_edges = files.edge_index ? edges.dim(1) : edges.dim(0);
  if (num_edges == 0) throw_no_edges(edge_path);
  graph::EdgeStream stream = edges.dtype() == DType::kInt64
                                 ? edge_stream<int64_t>(edges, files.edge_index, num_edges)
                                 : edge_stream<int32_t>(edges, files.edge_index, num_edges);
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
