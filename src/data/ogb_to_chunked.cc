// OGB's raw node-property layout (csv.gz) to the chunked layout, streaming
// (partita/data/generate_chunked.h): each file is decompressed once, front to back, and
// written out chunk by chunk, so memory is one chunk's buffer plus the split ids.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "gz_reader.h"
#include "partita/core/directory.h"
#include "partita/core/error.h"
#include "partita/core/half.h"
#include "partita/core/log.h"
#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"
#include "partita/data/generate_chunked.h"
#include "readers.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;

constexpr double kProgressSeconds = 10;

std::string chunk_name(const char* folder, const char* kind, int64_t k) {
  return fmt::format("{}/{}-{:05d}.npy", folder, kind, k);
}

// Collects rows of `width` T and writes a chunk file each time `chunk_rows` are full.
template <class T>
class ChunkSink {
 public:
  ChunkSink(std::string dir, const char* folder, const char* kind, int64_t chunk_rows, DType dtype,
            std::vector<ChunkFile>& chunks, int64_t& bytes)
      : dir_(std::move(dir)),
        folder_(folder),
        kind_(kind),
        chunk_rows_(chunk_rows),
        dtype_(dtype),
        chunks_(chunks),
        bytes_(bytes) {}

  void set_width(int64_t width) {
    width_ = width;
    buffer_.reserve(static_cast<size_t>(chunk_rows_ * width));
  }
  T* add_row() {
    buffer_.resize(buffer_.size() + static_cast<size_t>(width_));
    return buffer_.data() + buffer_.size() - width_;
  }
  void row_done() {
    if (static_cast<int64_t>(buffer_.size()) == chunk_rows_ * width_) flush();
  }
  void flush() {
    if (buffer_.empty()) return;
    const int64_t rows = static_cast<int64_t>(buffer_.size()) / width_;
    const std::string name = chunk_name(folder_, kind_, static_cast<int64_t>(chunks_.size()));
    // Labels are 1-D; edges and features (even of one column) are matrices.
    std::vector<int64_t> shape = {rows};
    if (width_ > 1 || is_feature_dtype(dtype_)) shape.push_back(width_);
    NpyWriter writer(dir_ + name, dtype_, shape);
    if (dtype_ == dtype_of<T>()) {
      writer.write(buffer_.data(), buffer_.size() * sizeof(T));
    } else {
      narrow_.resize(buffer_.size() * dtype_size(dtype_));
      narrow_floats(reinterpret_cast<const float*>(buffer_.data()),
                    static_cast<int64_t>(buffer_.size()), dtype_, narrow_.data());
      writer.write(narrow_.data(), narrow_.size());
    }
    writer.finish();
    bytes_ += static_cast<int64_t>(fs::file_size(dir_ + name));
    chunks_.push_back({name, rows});
    buffer_.clear();
  }

 private:
  std::string dir_;
  const char* folder_;
  const char* kind_;
  int64_t chunk_rows_;
  DType dtype_;
  std::vector<ChunkFile>& chunks_;
  int64_t& bytes_;
  int64_t width_ = 1;
  std::vector<T> buffer_;
  std::vector<unsigned char> narrow_;
};

int64_t read_count(const std::string& path) {
  GzLineReader reader(path, 1 << 16);
  return parse_ogb_count(reader);
}

// Logs "<path>: N lines converted" every kProgressSeconds.
class LineProgress {
 public:
  explicit LineProgress(const std::string& path) : path_(path) {}
  void line(int64_t number) {
    if ((number & 0xffff) != 0 || watch_.seconds() < kProgressSeconds) return;
    log_info("{}: {} lines converted ({:.0f} s)", path_, number, start_.seconds());
    watch_.restart();
  }

 private:
  const std::string& path_;
  Stopwatch watch_, start_;
};

}  // namespace

GenerateStats convert_ogb_to_chunked(const std::string& ogb_dir, const std::string& out_dir,
                                     const ChunkedWriteOptions& chunked, const std::string& split) {
  PARTITA_CHECK_PARAM(chunked.chunk_rows >= 1, "chunk_rows", "must be at least 1, got {}",
                      chunked.chunk_rows);
  PARTITA_CHECK_PARAM(chunked.node_chunk_rows >= 1, "node_chunk_rows", "must be at least 1, got {}",
                      chunked.node_chunk_rows);
  PARTITA_CHECK_PARAM(is_feature_dtype(chunked.feature_dtype), "feature_dtype",
                      "must be float32, float16 or bfloat16, got {}",
                      dtype_name(chunked.feature_dtype));
  Stopwatch watch;
  const std::string raw = ogb_dir + "/raw/";
  std::error_code ec;
  PARTITA_CHECK(!fs::exists(raw + "num-node-dict.csv.gz", ec), FormatError,
                "{}: a heterogeneous OGB dataset; only node-property datasets with one node type "
                "are converted",
                ogb_dir);
  // The arrays load_dataset reads beside the graph (read_ogb_arrays) are not converted yet:
  // refused rather than dropped.
  for (const char* file :
       {"edge_year.csv.gz", "edge_weight.csv.gz", "edge_feat.csv.gz", "node_year.csv.gz"})
    PARTITA_CHECK(!fs::exists(raw + file, ec), FormatError,
                  "{}{}: edge and node arrays are not converted to the chunked layout yet; "
                  "partition the OGB directory in one process (partita partition without mpirun)",
                  raw, file);
  const std::string edge_path = raw + "edge.csv.gz", feat_path = raw + "node-feat.csv.gz",
                    label_path = raw + "node-label.csv.gz";
  const std::string node_count_path = raw + "num-node-list.csv.gz";
  const int64_t n = read_count(node_count_path);
  PARTITA_CHECK(n > 0, FormatError, "{}: the dataset has no nodes", node_count_path);
  const int64_t claimed_edges = read_count(raw + "num-edge-list.csv.gz");
  const std::string dir = out_dir + "/";
  for (const char* sub : {"", "edges", "nodes"}) create_directory(dir + sub);
  ChunkedManifest m;
  m.num_nodes = n;
  GenerateStats stats;
  stats.nodes = n;

  {
    GzLineReader reader(edge_path);
    ChunkSink<int64_t> sink(dir, "edges", "edges", chunked.chunk_rows, DType::kInt64, m.edges,
                            stats.bytes_written);
    sink.set_width(2);
    LineProgress progress(edge_path);
    stats.edges = for_each_line(reader, [&](const char* b, const char* e, int64_t line) {
      int64_t* pair = sink.add_row();
      parse_int_pair_line(edge_path, b, e, line, &pair[0], &pair[1]);
      PARTITA_CHECK(pair[0] >= 0 && pair[0] < n && pair[1] >= 0 && pair[1] < n, FormatError,
                    "{}: line {}: edge ({}, {}) has a node id outside [0, {})", edge_path, line,
                    pair[0], pair[1], n);
      sink.row_done();
      progress.line(line);
    });
    sink.flush();
    if (stats.edges == 0) throw_no_edges(edge_path);
    PARTITA_CHECK(stats.edges == claimed_edges, FormatError, "{}: {} edge lines, but {} says {}",
                  edge_path, stats.edges, raw + "num-edge-list.csv.gz", claimed_edges);
  }

  {
    GzLineReader reader(feat_path);
    ChunkedFeatures& features = m.features.emplace();
    features.dtype = chunked.feature_dtype;
    ChunkSink<float> sink(dir, "nodes", "feat", chunked.node_chunk_rows, chunked.feature_dtype,
                          features.chunks, stats.bytes_written);
    LineProgress progress(feat_path);
    int64_t rows = 0;
    for_each_line(reader, [&](const char* b, const char* e, int64_t line) {
      if (rows == 0) {
        features.dim = count_fields(b, e);
        sink.set_width(features.dim);
      }
      PARTITA_CHECK(rows < n, FormatError, "{}: line {}: more than {} feature rows ({} says {})",
                    feat_path, line, n, node_count_path, n);
      float* row = sink.add_row();
      parse_float_row(feat_path, b, e, line, features.dim, row);
      for (int64_t j = 0; j < features.dim; ++j)
        PARTITA_CHECK(std::isfinite(row[j]), FormatError,
                      "{}: row {} column {}: value {} is not finite", feat_path, rows, j, row[j]);
      ++rows;
      sink.row_done();
      progress.line(line);
    });
    sink.flush();
    PARTITA_CHECK(rows == n, FormatError, "{}: {} feature rows, but {} says {} nodes", feat_path,
                  rows, node_count_path, n);
  }

  {
    GzLineReader reader(label_path);
    ChunkSink<int64_t> sink(dir, "nodes", "label", chunked.node_chunk_rows, DType::kInt64, m.labels,
                            stats.bytes_written);
    int64_t rows = 0, max_label = -1;
    for_each_line(reader, [&](const char* b, const char* e, int64_t line) {
      PARTITA_CHECK(rows < n, FormatError, "{}: line {}: more than {} labels ({} says {})",
                    label_path, line, n, node_count_path, n);
      int64_t* label = sink.add_row();
      *label = parse_ogb_label_line(label_path, b, e, line);
      PARTITA_CHECK(*label >= 0 && *label <= kMaxLabel, FormatError,
                    "{}: line {}: label {} is outside [0, {}]", label_path, line, *label,
                    kMaxLabel);
      max_label = std::max(max_label, *label);
      ++rows;
      sink.row_done();
    });
    sink.flush();
    PARTITA_CHECK(rows == n, FormatError, "{}: {} labels, but {} says {} nodes", label_path, rows,
                  node_count_path, n);
    m.num_classes = max_label + 1;
  }

  std::string split_name;
  const std::string split_dir = choose_split(ogb_dir, split, &split_name);
  const char* names[] = {"train", "valid", "test"};
  int64_t* sizes[] = {&stats.split.train, &stats.split.valid, &stats.split.test};
  for (int i = 0; i < 3; ++i) {
    GzLineReader reader(split_dir + "/" + names[i] + ".csv.gz", 1 << 20);
    const std::vector<int64_t> ids = parse_ogb_ids(reader, n);  // validated, sorted
    const std::string path = dir + names[i] + "_idx.npy";
    write_npy<int64_t>(path, ids);
    stats.bytes_written += static_cast<int64_t>(fs::file_size(path));
    *sizes[i] = static_cast<int64_t>(ids.size());
  }
  stats.bytes_written += write_chunked_manifest(out_dir, m);
  stats.seconds = watch.seconds();
  return stats;
}

}  // namespace partita::data
