// generate_synthetic's graph in the chunked layout, shared among ranks
// (partita/data/generate_chunked.h). A chunk file covers rows of the edge list or of the
// node arrays; its rows are cut out of the model's fixed-size random streams (dcsbm.h), so
// a chunk's bytes do not depend on who writes it.
#include "partita/data/generate_chunked.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "dcsbm.h"
#include "generate_util.h"
#include "partita/core/directory.h"
#include "partita/core/error.h"
#include "partita/core/half.h"
#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/core/parameter_error.h"
#include "partita/core/random.h"
#include "partita/core/timer.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxChunks = 1000000;  // per kind; beyond it the manifest gets unwieldy
constexpr double kProgressSeconds = 10;  // between progress lines

int64_t edge_count(const GenerateOptions& o) {
  return static_cast<int64_t>(std::llround(static_cast<double>(o.nodes) * o.avg_degree));
}

int64_t chunk_count(int64_t rows, int64_t chunk_rows) {
  return (rows + chunk_rows - 1) / chunk_rows;
}

std::string chunk_name(const char* folder, const char* kind, int64_t k) {
  return fmt::format("{}/{}-{:05d}.npy", folder, kind, k);
}

void validate_chunked(const GenerateOptions& o, const ChunkedWriteOptions& c) {
  dcsbm::validate(o);
  PARTITA_CHECK_PARAM(c.chunk_rows >= 1, "chunk_rows", "must be at least 1, got {}", c.chunk_rows);
  PARTITA_CHECK_PARAM(c.node_chunk_rows >= 1, "node_chunk_rows", "must be at least 1, got {}",
                      c.node_chunk_rows);
  PARTITA_CHECK_PARAM(chunk_count(edge_count(o), c.chunk_rows) <= kMaxChunks, "chunk_rows",
                      "{} rows per chunk make more than {} edge chunk files; use more",
                      c.chunk_rows, kMaxChunks);
  PARTITA_CHECK_PARAM(chunk_count(o.nodes, c.node_chunk_rows) <= kMaxChunks, "node_chunk_rows",
                      "{} rows per chunk make more than {} node chunk files; use more",
                      c.node_chunk_rows, kMaxChunks);
  PARTITA_CHECK_PARAM(is_feature_dtype(c.feature_dtype), "feature_dtype",
                      "must be float32, float16 or bfloat16, got {}", dtype_name(c.feature_dtype));
}

// Writes rows [b, e) of a stream of `total` rows generated in chunks of `gen_rows` rows of
// `width` T each (gen(chunk, first_row, rows, out) fills one whole chunk) to `writer`,
// converting each slice with `emit(data, rows)`. Chunks are generated kBatchChunks at a time
// in parallel.
template <class T, class Gen, class Emit>
void write_stream_rows(int64_t b, int64_t e, int64_t total, int64_t gen_rows, int64_t width,
                       int threads, const Gen& gen, const Emit& emit) {
  const int64_t g_first = b / gen_rows, g_last = (e - 1) / gen_rows + 1;
  std::vector<std::vector<T>> buffers(static_cast<size_t>(kBatchChunks));
  for (int64_t g0 = g_first; g0 < g_last; g0 += kBatchChunks) {
    const int64_t count = std::min<int64_t>(kBatchChunks, g_last - g0);
    parallel_chunks(0, count, 1, threads, [&](int64_t i, int64_t) {
      const int64_t g = g0 + i, first = g * gen_rows, rows = std::min(gen_rows, total - first);
      buffers[i].resize(static_cast<size_t>(rows * width));
      gen(g, first, rows, buffers[i].data());
    });
    for (int64_t i = 0; i < count; ++i) {
      const int64_t first = (g0 + i) * gen_rows;
      const int64_t lo = std::max(b, first), hi = std::min(e, first + gen_rows);
      emit(buffers[i].data() + (lo - first) * width, hi - lo);
    }
  }
}

int64_t file_bytes(const std::string& path) { return static_cast<int64_t>(fs::file_size(path)); }

// Logs "what k/n" at most every kProgressSeconds, and the last one.
class Progress {
 public:
  Progress(int rank, const char* what, int64_t total) : rank_(rank), what_(what), total_(total) {}
  void done(int64_t k) {
    if (k < total_ && watch_.seconds() < kProgressSeconds) return;
    log_info("generate: rank {}: {} {}/{} written ({:.1f} s)", rank_, what_, k, total_,
             start_.seconds());
    watch_.restart();
  }

 private:
  int rank_;
  const char* what_;
  int64_t total_;
  Stopwatch watch_, start_;
};

// Chunk k of optional array `a` (rows [b, b + its rows) of `total`), cut out of the streams
// generate_synthetic draws the whole array from (generate.cc: chunk g of kEdgeChunk rows, or
// kEdgeChunk / d for edge features, or kNodeChunk for nodes, from stream (seed, purpose, g)),
// so that the chunks laid end to end are the numpy layout's file. Returns the file's size.
int64_t write_array_chunk(const GenerateOptions& o, const std::string& dir, const ChunkedArray& a,
                          int64_t k, int64_t b, int64_t total, int threads) {
  const int64_t e = b + a.chunks[static_cast<size_t>(k)].rows;
  const std::string path = dir + a.chunks[static_cast<size_t>(k)].file;
  const int64_t w = std::max<int64_t>(a.dim, 1);
  NpyWriter writer(path, a.dtype,
                   a.dim > 0 ? std::vector<int64_t>{e - b, a.dim} : std::vector<int64_t>{e - b});
  auto write = [&](auto value, dcsbm::Purpose purpose, int64_t gen_rows) {
    using T = decltype(value(std::declval<Rng&>()));
    if (e > b)
      write_stream_rows<T>(
          b, e, total, gen_rows, w, threads,
          [&](int64_t g, int64_t, int64_t rows, T* out) {
            Rng rng(stream_key(o.seed, purpose, static_cast<uint64_t>(g)));
            for (int64_t i = 0; i < rows * w; ++i) out[i] = value(rng);
          },
          [&](const T* data, int64_t rows) {
            writer.write(data, static_cast<size_t>(rows * w) * sizeof(T));
          });
  };
  auto time = [](Rng& rng) { return static_cast<int64_t>(rng.below(kGeneratedTimes)); };
  if (a.name == "edge_time") write(time, dcsbm::kEdgeTime, dcsbm::kEdgeChunk);
  if (a.name == "node_time") write(time, dcsbm::kNodeTime, dcsbm::kNodeChunk);
  if (a.name == "edge_weight")
    write([](Rng& rng) { return static_cast<float>(0.5 + rng.uniform()); }, dcsbm::kEdgeWeight,
          dcsbm::kEdgeChunk);
  if (a.name == "edge_feat")
    write([](Rng& rng) { return static_cast<float>(rng.normal()); }, dcsbm::kEdgeFeat,
          std::max<int64_t>(1, dcsbm::kEdgeChunk / a.dim));
  writer.finish();
  return file_bytes(path);
}

}  // namespace

ChunkedManifest chunked_generate_manifest(const GenerateOptions& o, const ChunkedWriteOptions& c) {
  validate_chunked(o, c);
  ChunkedManifest m;
  m.num_nodes = o.nodes;
  m.num_classes = dcsbm::classes_present(o);
  const int64_t edges = edge_count(o);
  for (int64_t k = 0; k < chunk_count(edges, c.chunk_rows); ++k)
    m.edges.push_back(
        {chunk_name("edges", "edges", k), std::min(c.chunk_rows, edges - k * c.chunk_rows)});
  ChunkedFeatures& f = m.features.emplace();
  f.dtype = c.feature_dtype;
  f.dim = o.feat_dim;
  for (int64_t k = 0; k < chunk_count(o.nodes, c.node_chunk_rows); ++k) {
    const int64_t rows = std::min(c.node_chunk_rows, o.nodes - k * c.node_chunk_rows);
    f.chunks.push_back({chunk_name("nodes", "feat", k), rows});
    m.labels.push_back({chunk_name("nodes", "label", k), rows});
  }
  // The optional arrays (GenerateOptions::edge_time ...): chunked as the edges and the labels.
  auto array = [](const char* name, DType dtype, int64_t dim, const char* folder,
                  const std::vector<ChunkFile>& like) {
    ChunkedArray a{name, dtype, dim, {}};
    for (size_t k = 0; k < like.size(); ++k)
      a.chunks.push_back({chunk_name(folder, name, static_cast<int64_t>(k)), like[k].rows});
    return a;
  };
  if (o.edge_time) m.edge_arrays.push_back(array("edge_time", DType::kInt64, 0, "edges", m.edges));
  if (o.edge_weight)
    m.edge_arrays.push_back(array("edge_weight", DType::kFloat32, 0, "edges", m.edges));
  if (o.edge_feat_dim > 0)
    m.edge_arrays.push_back(array("edge_feat", DType::kFloat32, o.edge_feat_dim, "edges", m.edges));
  if (o.node_time) m.node_arrays.push_back(array("node_time", DType::kInt64, 0, "nodes", m.labels));
  return m;
}

GenerateStats generate_chunked_share(const GenerateOptions& options,
                                     const ChunkedWriteOptions& chunked, int rank, int ranks) {
  const GenerateOptions& o = options;
  const ChunkedManifest m = chunked_generate_manifest(o, chunked);
  Stopwatch watch;
  const int threads = resolve_threads(o.threads);
  const std::string dir = o.out_dir + "/";
  for (const char* sub : {"", "edges", "nodes"}) create_directory(dir + sub);
  // A manifest left by an earlier run would describe chunks being replaced: drop it, so the
  // directory is no dataset until this run's manifest is written.
  if (rank == 0) {
    std::error_code ec;
    fs::remove(dir + kChunkedManifest, ec);
    PARTITA_CHECK(!ec, IoError, "{}{}: cannot remove the old manifest: {}", dir, kChunkedManifest,
                  ec.message());
  }
  GenerateStats stats;
  stats.nodes = o.nodes;
  const int64_t edges = edge_count(o), cr = chunked.chunk_rows;
  const auto share = [&](size_t count) {
    return std::pair<int64_t, int64_t>(static_cast<int64_t>(count) * rank / ranks,
                                       static_cast<int64_t>(count) * (rank + 1) / ranks);
  };
  const auto [e_first, e_last] = share(m.edges.size());
  const auto [n_first, n_last] = share(m.labels.size());

  Stopwatch phase;
  dcsbm::Model model;
  if (e_first < e_last || n_first < n_last) model = dcsbm::build_model(o, threads);
  stats.model_s = phase.seconds();

  phase.restart();
  Progress edge_progress(rank, "edge chunks", e_last - e_first);
  for (int64_t k = e_first; k < e_last; ++k) {
    const int64_t b = k * cr, e = std::min(edges, b + cr);
    const std::string path = dir + m.edges[k].file;
    NpyWriter writer(path, DType::kInt64, {e - b, 2});
    write_stream_rows<int64_t>(
        b, e, edges, dcsbm::kEdgeChunk, 2, threads,
        [&](int64_t g, int64_t, int64_t rows, int64_t* out) {
          dcsbm::generate_edge_chunk(model, o, g, rows, out);
        },
        [&](const int64_t* data, int64_t rows) {
          writer.write(data, static_cast<size_t>(rows) * 2 * sizeof(int64_t));
        });
    writer.finish();
    stats.edges += e - b;
    stats.bytes_written += file_bytes(path);
    edge_progress.done(k + 1 - e_first);
  }
  for (const ChunkedArray& a : m.edge_arrays)
    for (int64_t k = e_first; k < e_last; ++k)
      stats.bytes_written += write_array_chunk(o, dir, a, k, k * cr, edges, threads);
  stats.edges_s = phase.seconds();

  phase.restart();
  for (const ChunkedArray& a : m.node_arrays)
    for (int64_t k = n_first; k < n_last; ++k)
      stats.bytes_written +=
          write_array_chunk(o, dir, a, k, k * chunked.node_chunk_rows, o.nodes, threads);
  const std::vector<float> centroids = dcsbm::centroids(o);
  const int64_t f = o.feat_dim, fr = dcsbm::feature_chunk_rows(f);
  const DType dtype = chunked.feature_dtype;
  std::vector<unsigned char> narrow;
  Progress node_progress(rank, "node chunks", n_last - n_first);
  for (int64_t k = n_first; k < n_last; ++k) {
    const int64_t b = k * chunked.node_chunk_rows,
                  e = std::min(o.nodes, b + chunked.node_chunk_rows);
    const std::string feat_path = dir + m.features->chunks[k].file;
    NpyWriter writer(feat_path, dtype, {e - b, f});
    write_stream_rows<float>(
        b, e, o.nodes, fr, f, threads,
        [&](int64_t g, int64_t first, int64_t rows, float* out) {
          dcsbm::generate_feature_chunk(model, centroids, o, g, first, first + rows, out);
        },
        [&](const float* data, int64_t rows) {
          if (dtype == DType::kFloat32) {
            writer.write(data, static_cast<size_t>(rows * f) * sizeof(float));
            return;
          }
          narrow.resize(static_cast<size_t>(rows * f) * dtype_size(dtype));
          narrow_floats(data, rows * f, dtype, narrow.data());
          writer.write(narrow.data(), narrow.size());
        });
    writer.finish();
    const std::string label_path = dir + m.labels[k].file;
    write_npy<int64_t>(label_path, ArrayView<const int64_t>(model.label.data() + b, e - b),
                       {e - b});
    stats.bytes_written += file_bytes(feat_path) + file_bytes(label_path);
    node_progress.done(k + 1 - n_first);
  }
  stats.features_s = phase.seconds();

  phase.restart();
  stats.split = split_sizes(o);
  if (rank == 0)
    stats.bytes_written +=
        write_random_split(dir, o.nodes, stream_key(o.seed, dcsbm::kSplit), stats.split);
  stats.split_s = phase.seconds();
  stats.seconds = watch.seconds();
  return stats;
}

GenerateOptions papers100m_options(double scale) {
  using P = Papers100mShape;
  PARTITA_CHECK_PARAM(std::isfinite(scale) && scale > 0 && scale <= 1, "scale",
                      "must be in (0, 1], got {}", scale);
  GenerateOptions o;
  o.nodes = std::llround(static_cast<double>(P::kNodes) * scale);
  PARTITA_CHECK_PARAM(o.nodes >= P::kClasses, "scale",
                      "{} gives {} nodes; the papers100m shape needs at least {} (one per class)",
                      scale, o.nodes, P::kClasses);
  const double edges = std::round(static_cast<double>(P::kEdges) * scale);
  o.avg_degree = edges / static_cast<double>(o.nodes);
  o.feat_dim = P::kFeatDim;
  o.classes = P::kClasses;
  o.homophily = 0.6;
  o.power_law = 2.2;
  const double n = static_cast<double>(P::kNodes);
  o.train_fraction = static_cast<double>(P::kTrain) / n;
  o.valid_fraction = static_cast<double>(P::kValid) / n;
  o.test_fraction = static_cast<double>(P::kTest) / n;
  return o;
}

}  // namespace partita::data
