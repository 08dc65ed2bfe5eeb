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
  Stopwatch watch;
  const NumpyLayout layout = check_numpy_layout(dir);
  const NumpyLayoutFiles& files = layout.files;
  Dataset ds;
  ds.num_nodes = layout.num_nodes;
  ds.num_classes = scan_labels(files.label, 0, ds.num_nodes, Unlabelled::kAllowed, ds.labels);
  std::vector<int64_t>* splits[] = {&ds.train_idx, &ds.valid_idx, &ds.test_idx};
  for (int i = 0; i < 3; ++i) {
    *splits[i] = layout.splits[i];
    check_split_labeled(
        ds.labels, 0, *splits[i], [&](int64_t) { return files.label; }, files.splits[i].name,
        files.splits[i].path);
  }
  ds.edge_split = read_numpy_edge_split(dir, ds.num_nodes);
  stats.read_rest_s += watch.seconds();

  watch.restart();
  NpyArray edges = NpyArray::open(files.edges);  // Fortran order: copied into C order
  graph::EdgeStream stream = edges.dtype() == DType::kInt64
                                 ? edge_stream<int64_t>(edges, files.edge_index, layout.num_edges)
                                 : edge_stream<int32_t>(edges, files.edge_index, layout.num_edges);
  graph::InEdgeOptions graph_options;
  graph_options.undirected = options.undirected;
  graph_options.threads = options.threads;
  graph_options.source = files.edges;
  set_graph(ds, graph::build_in_edges(ds.num_nodes, stream, graph_options));
  stats.build_graph_s += watch.seconds();

  watch.restart();
  ds.features = FeatureMatrix::mapped(NpyArray::open(files.feat));
  check_finite(ds.features, files.feat, options.threads);
  stats.read_features_s += watch.seconds();
  return ds;
}

}  // namespace partita::data
