// Reader of OGB's raw node-property layout (raw/*.csv.gz + split/<name>/*.csv.gz).
// Text is decompressed on a background thread (GzLineReader) and parsed in place, straight
// into the final arrays.
#include <fast_float/fast_float.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "gz_reader.h"
#include "partita/core/error.h"
#include "partita/core/timer.h"
#include "readers.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;

// Adds a reader's figures to the load statistics when it goes out of scope.
class TextTimer {
 public:
  TextTimer(const GzLineReader& reader, LoadStats& stats) : reader_(reader), stats_(stats) {}
  ~TextTimer() {
    stats_.text_s += watch_.seconds();
    stats_.text_bytes += reader_.text_bytes();
    stats_.compressed_bytes += reader_.compressed_bytes();
  }

 private:
  const GzLineReader& reader_;
  LoadStats& stats_;
  Stopwatch watch_;
};

// A label written as an integer or as an integral float ("3", "3.0", "3e0").
int64_t parse_label(const std::string& path, const char* b, const char* e, int64_t line) {
  int64_t v = 0;
  if (!parse_int_field(b, e, &v)) {
    double d = 0;
    auto r = fast_float::from_chars(b, e, d);
    if (r.ec != std::errc() || r.ptr != e) {
      if (count_fields(b, e) != 1) {
        throw FormatError(fmt::format("{}: line {}: expected 1 label, found {} values", path, line,
                                      count_fields(b, e)));
      }
      throw FormatError(
          fmt::format("{}: line {}: label {} is not a number", path, line, quote_field(b, e)));
    }
    PARTITA_CHECK(std::isfinite(d) && d == std::floor(d) && std::fabs(d) <= kMaxLabel, FormatError,
                  "{}: line {}: label {} is not an integer in [0, {}]", path, line,
                  quote_field(b, e), kMaxLabel);
    v = static_cast<int64_t>(d);
  }
  PARTITA_CHECK(v >= 0 && v <= kMaxLabel, FormatError, "{}: line {}: label {} is outside [0, {}]",
                path, line, v, kMaxLabel);
  return v;
}

// A file holding one non-negative count (num-node-list / num-edge-list).
int64_t read_count(const std::string& path, LoadStats& stats) {
  GzLineReader reader(path, 1 << 16);
  TextTimer timer(reader, stats);
  return parse_ogb_count(reader);
}

std::vector<int64_t> read_labels(const std::string& path, LoadStats& stats) {
  GzLineReader reader(path);
  TextTimer timer(reader, stats);
  return parse_ogb_labels(reader);
}

std::vector<int64_t> read_edges(const std::string& path, int64_t claimed, LoadStats& stats) {
  GzLineReader reader(path);
  TextTimer timer(reader, stats);
  return parse_ogb_edges(reader, claimed);
}

FeatureMatrix read_features(const std::string& path, int64_t num_nodes,
                            const std::string& count_source, LoadStats& stats) {
  GzLineReader reader(path);
  TextTimer timer(reader, stats);
  return parse_ogb_features(reader, num_nodes, count_source);
}

std::vector<int64_t> read_ids(const std::string& path, int64_t num_nodes, LoadStats& stats) {
  GzLineReader reader(path, 1 << 20);
  TextTimer timer(reader, stats);
  return parse_ogb_ids(reader, num_nodes);
}

}  // namespace

int64_t parse_ogb_label_line(const std::string& path, const char* b, const char* e, int64_t line) {
  return parse_label(path, b, e, line);
}

std::string choose_split(const std::string& dir, const std::string& wanted, std::string* name) {
  const std::string root = dir + "/split";
  std::error_code ec;
  PARTITA_CHECK(fs::is_directory(root, ec), IoError,
                "{}: missing (the OGB layout needs split/<name>/{{train,valid,test}}.csv.gz)",
                root);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (entry.is_directory(ec)) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  if (!wanted.empty()) {
    PARTITA_CHECK(std::find(names.begin(), names.end(), wanted) != names.end(), IoError,
                  "{}/{}: no such split (available: {})", root, wanted,
                  list.empty() ? "none" : list);
    *name = wanted;
  } else {
    PARTITA_CHECK(!names.empty(), IoError, "{}: no split folder inside", root);
    PARTITA_CHECK(names.size() == 1, FormatError,
                  "{}: several splits ({}); choose one with `split`", root, list);
    *name = names[0];
  }
  return root + "/" + *name;
}

int64_t parse_ogb_count(LineSource& text) {
  const std::string& path = text.path();
  int64_t value = -1;
  const int64_t lines = for_each_line(text, [&](const char* b, const char* e, int64_t line) {
    PARTITA_CHECK(line == 1, FormatError,
                  "{}: line {}: expected a single count (only node-property datasets with one "
                  "graph are supported)",
                  path, line);
    value = parse_int_line(path, b, e, line);
    PARTITA_CHECK(value >= 0, FormatError, "{}: line 1: negative count {}", path, value);
  });
  PARTITA_CHECK(lines == 1, FormatError, "{}: empty file, expected one count", path);
  return value;
}

std::vector<int64_t> parse_ogb_labels(LineSource& text) {
  std::vector<int64_t> labels;
  for_each_line(text, [&](const char* b, const char* e, int64_t line) {
    labels.push_back(parse_label(text.path(), b, e, line));
  });
  return labels;
}

// `claimed` (num-edge-list) only sizes the buffer, bounded by what the source can hold
// ("0,0\n" is 4 bytes).
std::vector<int64_t> parse_ogb_edges(LineSource& text, int64_t claimed) {
  std::vector<int64_t> pairs;
  pairs.reserve(
      2 * static_cast<size_t>(std::max<int64_t>(0, std::min(claimed, text.max_text_bytes() / 4))));
  for_each_line(text, [&](const char* b, const char* e, int64_t line) {
    int64_t s = 0, d = 0;
    parse_int_pair_line(text.path(), b, e, line, &s, &d);
    pairs.push_back(s);
    pairs.push_back(d);
  });
  return pairs;
}

// The dimension comes from the first row; the buffer is sized once num_nodes * dim is known
// to fit in what the source can hold.
FeatureMatrix parse_ogb_features(LineSource& text, int64_t num_nodes,
                                 const std::string& count_source) {
  const std::string& path = text.path();
  PARTITA_CHECK(num_nodes > 0, Error, "{}: internal: feature rows for {} nodes", path, num_nodes);
  std::vector<float> values;
  int64_t dim = 0, rows = 0;
  for_each_line(text, [&](const char* b, const char* e, int64_t line) {
    if (rows == 0) {
      dim = count_fields(b, e);
      // Each value takes at least 2 bytes of text (a digit and a separator).
      const int64_t bound = text.max_text_bytes() / 2;
      PARTITA_CHECK(dim <= bound / num_nodes, FormatError,
                    "{}: {} rows of {} values (row count from {}) cannot fit in {}", path,
                    num_nodes, dim, count_source, text.size_text());
      values.resize(static_cast<size_t>(num_nodes * dim));
    }
    PARTITA_CHECK(rows < num_nodes, FormatError,
                  "{}: line {}: more than {} feature rows ({} has {} nodes)", path, line, num_nodes,
                  count_source, num_nodes);
    parse_float_row(path, b, e, line, dim, values.data() + rows * dim);
    ++rows;
  });
  PARTITA_CHECK(rows == num_nodes, FormatError, "{}: {} feature rows, but {} has {} nodes", path,
                rows, count_source, num_nodes);
  return FeatureMatrix::owned(std::move(values), num_nodes, dim);
}

std::vector<int64_t> parse_ogb_ids(LineSource& text, int64_t num_nodes) {
  std::vector<int64_t> ids;
  for_each_line(text, [&](const char* b, const char* e, int64_t line) {
    ids.push_back(parse_int_line(text.path(), b, e, line));
  });
  validate_split(ids, num_nodes, text.path(), /*lines=*/true);
  return ids;
}

Dataset read_ogb_dataset(const std::string& dir, const LoadOptions& options, LoadStats& stats) {
  const std::string raw = dir + "/raw/";
  const std::string node_count_path = raw + "num-node-list.csv.gz";
  const std::string edge_count_path = raw + "num-edge-list.csv.gz";
  const std::string label_path = raw + "node-label.csv.gz";
  const std::string edge_path = raw + "edge.csv.gz";
  std::error_code ec;
  PARTITA_CHECK(fs::exists(edge_path, ec) || !fs::exists(raw + "relations", ec), FormatError,
                "{}: heterogeneous OGB layout (raw/relations/) without raw/num-node-dict.csv.gz is "
                "not supported; expected raw/num-node-dict.csv.gz (heterogeneous) or "
                "raw/edge.csv.gz",
                dir + "/raw");
  Dataset ds;

  Stopwatch watch;
  const int64_t num_nodes = read_count(node_count_path, stats);
  PARTITA_CHECK(num_nodes > 0, FormatError, "{}: the dataset has no nodes", node_count_path);
  const int64_t claimed_edges = read_count(edge_count_path, stats);
  ds.labels = read_labels(label_path, stats);
  PARTITA_CHECK(static_cast<int64_t>(ds.labels.size()) == num_nodes, FormatError,
                "{}: {} labels, but {} says {} nodes", label_path, ds.labels.size(),
                node_count_path, num_nodes);
  ds.num_nodes = num_nodes;
  ds.num_classes = validate_labels(ds.labels, label_path);
  stats.read_rest_s += watch.seconds();

  watch.restart();
  std::vector<int64_t> pairs = read_edges(edge_path, claimed_edges, stats);
  const int64_t edges = static_cast<int64_t>(pairs.size() / 2);
  if (edges == 0) throw_no_edges(edge_path);
  PARTITA_CHECK(edges == claimed_edges, FormatError, "{}: {} edge lines, but {} says {}", edge_path,
                edges, edge_count_path, claimed_edges);
  stats.read_edges_s += watch.seconds();

  watch.restart();
  std::vector<ExtraArray> listed;
  read_ogb_arrays(raw, edges, edge_count_path, num_nodes, node_count_path, listed, ds.node_arrays,
                  stats);
  stats.read_rest_s += watch.seconds();
  watch.restart();
  if (!listed.empty()) {  // edge_year.csv.gz etc.: the numpy layout's keyed rows
    std::vector<int64_t> src(static_cast<size_t>(edges)), dst(static_cast<size_t>(edges));
    for (int64_t i = 0; i < edges; ++i) {
      src[i] = pairs[2 * i];
      dst[i] = pairs[2 * i + 1];
      PARTITA_CHECK(src[i] >= 0 && src[i] < num_nodes && dst[i] >= 0 && dst[i] < num_nodes,
                    FormatError, "{}: edge {} ({}, {}) has a node id outside [0, {})", edge_path, i,
                    src[i], dst[i], num_nodes);
    }
    std::vector<int64_t>().swap(pairs);
    build_keyed_graph(ds, src, dst, listed, options.undirected, options.threads);
  } else {
    graph::InEdgeOptions graph_options;
    graph_options.undirected = options.undirected;
    graph_options.threads = options.threads;
    graph_options.source = edge_path;
    set_graph(ds, graph::build_in_edges(num_nodes, graph::edge_stream_of(pairs), graph_options));
    std::vector<int64_t>().swap(pairs);
  }
  stats.build_graph_s += watch.seconds();

  watch.restart();
  ds.features = read_features(raw + "node-feat.csv.gz", num_nodes, node_count_path, stats);
  stats.read_features_s += watch.seconds();

  watch.restart();
  const std::string split_dir = choose_split(dir, options.split, &ds.split);
  ds.train_idx = read_ids(split_dir + "/train.csv.gz", num_nodes, stats);
  ds.valid_idx = read_ids(split_dir + "/valid.csv.gz", num_nodes, stats);
  ds.test_idx = read_ids(split_dir + "/test.csv.gz", num_nodes, stats);
  stats.read_rest_s += watch.seconds();
  return ds;
}

}  // namespace partita::data
