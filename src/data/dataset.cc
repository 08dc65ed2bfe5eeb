// FeatureMatrix, layout detection and the validation shared by both readers.
#include "partita/data/dataset.h"

#include <algorithm>
#include <filesystem>

#include "numpy_files.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"
#include "partita/data/chunked_layout.h"
#include "partita/data/class_count.h"
#include "readers.h"
#include "shard_files.h"

namespace partita::data {

namespace fs = std::filesystem;

FeatureMatrix FeatureMatrix::owned(std::vector<float> values, int64_t rows, int64_t cols) {
  PARTITA_CHECK(rows >= 0 && cols >= 0 && static_cast<int64_t>(values.size()) == rows * cols, Error,
                "internal: feature buffer of {} values is not {} x {}", values.size(), rows, cols);
  FeatureMatrix m;
  m.owned_ = std::move(values);
  m.data_ = m.owned_.data();
  m.rows_ = rows;
  m.cols_ = cols;
  return m;
}

FeatureMatrix FeatureMatrix::mapped(NpyArray array) {
  array.expect(DType::kFloat32, 2);
  FeatureMatrix m;
  m.rows_ = array.dim(0);
  m.cols_ = array.dim(1);
  m.mapped_ = std::move(array);
  m.data_ = m.mapped_->view<float>().data();
  return m;
}

void FeatureMatrix::release_rows(int64_t begin, int64_t end) const {
  if (mapped_) mapped_->release_elements(begin * cols_, end * cols_);
}

namespace {

constexpr int64_t kLabelBatch = int64_t{1} << 20;  // labels scanned per step

// The one rule of a label: in [0, kMaxLabel], or -1 where allowed.
void check_label(int64_t v, int64_t node, const std::string& source, Unlabelled unlabelled) {
  const bool allowed = unlabelled == Unlabelled::kAllowed;
  if ((v >= 0 || (allowed && v == -1)) && v <= kMaxLabel) return;
  throw FormatError(fmt::format("{}: node {} has label {}; labels must be in [0, {}]{}", source,
                                node, v, kMaxLabel,
                                allowed ? " (or -1: unlabelled, in no split)" : ""));
}

int64_t classes_of(int64_t max_label, const std::string& source) {
  PARTITA_CHECK(max_label >= 0, FormatError,
                "{}: every node has label -1 (unlabelled); at least one needs a class", source);
  return max_label + 1;
}

}  // namespace

int64_t validate_labels(const std::vector<int64_t>& labels, const std::string& source,
                        Unlabelled unlabelled) {
  int64_t max_label = -1;
  for (size_t i = 0; i < labels.size(); ++i) {
    check_label(labels[i], static_cast<int64_t>(i), source, unlabelled);
    max_label = std::max(max_label, labels[i]);
  }
  return labels.empty() ? 0 : classes_of(max_label, source);
}

int64_t scan_labels(const std::string& path, int64_t begin, int64_t end, Unlabelled unlabelled,
                    std::vector<int64_t>& kept) {
  const MappedNpy f = MappedNpy::open(path);
  f.expect(DType::kInt64, 1);
  std::vector<int64_t> batch;
  int64_t max_label = -1;
  for (int64_t b = 0; b < f.dim(0); b += kLabelBatch) {
    const int64_t n = std::min(kLabelBatch, f.dim(0) - b);
    batch.resize(static_cast<size_t>(n));
    f.copy_elements(b, b + n, batch.data());
    for (int64_t i = 0; i < n; ++i) {
      check_label(batch[i], b + i, path, unlabelled);
      max_label = std::max(max_label, batch[i]);
    }
    const int64_t lo = std::max(b, begin), hi = std::min(b + n, end);
    if (lo < hi) kept.insert(kept.end(), batch.begin() + (lo - b), batch.begin() + (hi - b));
  }
  return classes_of(max_label, path);
}

void check_split_labeled(const std::vector<int64_t>& labels, int64_t first,
                         const std::vector<int64_t>& ids,
                         const std::function<std::string(int64_t)>& label_file,
                         const std::string& name, const std::string& path) {
  for (int64_t v : ids)
    PARTITA_CHECK(labels[v - first] >= 0, FormatError,
                  "{}: node {} has label -1 (unlabelled) but is in the {} split ({}); a node in "
                  "a split needs a label",
                  label_file(v), v, name, path);
}

void validate_split(std::vector<int64_t>& ids, int64_t num_nodes, const std::string& source,
                    bool lines) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= num_nodes) {
      throw FormatError(fmt::format("{}: {} {}: node id {} is outside [0, {})", source,
                                    lines ? "line" : "entry", lines ? i + 1 : i, ids[i],
                                    num_nodes));
    }
  }
  std::sort(ids.begin(), ids.end());
  auto dup = std::adjacent_find(ids.begin(), ids.end());
  PARTITA_CHECK(dup == ids.end(), FormatError, "{}: node id {} is listed more than once", source,
                dup == ids.end() ? 0 : *dup);
}

void warn_split_overlap(const Dataset& ds) {
  std::vector<uint8_t> seen(static_cast<size_t>(ds.num_nodes), 0);
  int64_t overlap = 0;
  for (const auto* split : {&ds.train_idx, &ds.valid_idx, &ds.test_idx}) {
    for (int64_t v : *split) overlap += seen[v]++ > 0;
  }
  if (overlap > 0) {
    log_warning("{}: {} node(s) belong to more than one of train/valid/test", ds.path, overlap);
  }
}

void set_graph(Dataset& ds, graph::InEdgeResult&& result) {
  ds.in_edges = std::move(result.in_edges);
  ds.input_edges = result.input_edges;
  ds.self_loops_dropped = result.self_loops_dropped;
  ds.duplicates_dropped = result.duplicates_dropped;
}

void throw_no_edges(const std::string& source) {
  throw FormatError(fmt::format("{}: the edge list is empty (a graph needs edges)", source));
}

namespace {

// Options that only mean something for heterogeneous datasets.
void check_homogeneous_options(const std::string& dir, const LoadOptions& options) {
  PARTITA_CHECK_PARAM(options.reverse_relations, "reverse_relations",
                      "{} is a homogeneous dataset, without relations to reverse (for "
                      "heterogeneous ones only; `undirected` adds reverse edges to a homogeneous "
                      "one)",
                      dir);
}

}  // namespace

bool looks_like_dataset(const std::string& dir) {
  std::error_code ec;
  // raw/num-node-dict.csv.gz (OGB heterogeneous) lies under raw/ too.
  return fs::exists(dir + "/raw", ec) || fs::exists(dir + "/hetero.json", ec) ||
         looks_like_numpy_layout(dir) || looks_like_chunked_layout(dir);
}

Dataset load_dataset(const std::string& dir_arg, const LoadOptions& options, LoadStats* stats) {
  std::string dir = dir_arg;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  LoadStats local;
  LoadStats& st = stats != nullptr ? *stats : local;
  st = LoadStats{};
  std::error_code ec;
  PARTITA_CHECK(fs::exists(dir, ec), IoError, "{}: no such dataset directory", dir);
  PARTITA_CHECK(fs::is_directory(dir, ec), IoError, "{}: not a directory", dir);

  Stopwatch total;
  Dataset ds;
  if (fs::exists(dir + "/raw/num-node-dict.csv.gz", ec)) {
    ds = read_ogb_hetero_dataset(dir, options, st);
    ds.layout = "ogb";
  } else if (fs::exists(dir + "/hetero.json", ec)) {
    ds = read_numpy_hetero_dataset(dir, options, st);
    ds.layout = "numpy";
  } else if (fs::exists(dir + "/raw", ec)) {
    check_homogeneous_options(dir, options);
    ds = read_ogb_dataset(dir, options, st);
    ds.layout = "ogb";
  } else if (looks_like_numpy_layout(dir)) {
    check_homogeneous_options(dir, options);
    ds = read_numpy_dataset(dir, options, st);
    ds.layout = "numpy";
  } else if (looks_like_chunked_layout(dir)) {
    // Also "chunked" in Dataset::layout (dataset.h lists ogb and numpy; left unedited so
    // that its many includers do not rebuild).
    ds = read_chunked_dataset(dir, options, st);
    ds.layout = "chunked";
  } else {
    throw IoError(fmt::format(
        "{}: not a dataset directory: expected raw/edge.csv.gz, raw/node-feat.csv.gz, ... and "
        "split/<name>/ (OGB node-property layout), raw/num-node-dict.csv.gz, raw/relations/ ... "
        "(OGB heterogeneous layout), edges.npy, feat.npy, label.npy, "
        "{{train,valid,test}}_idx.npy (Partita numpy layout) or hetero.json, edges/ ... "
        "(Partita numpy heterogeneous layout; docs/dataset-format.md)",
        dir));
  }
  ds.path = dir;
  ClassCountInput classes{
      dir, {}, ds.layout == "chunked" ? ds.num_classes : 0, options.num_classes};
  classes.census.add(ds.labels);
  ds.num_classes = resolve_num_classes(classes);
  warn_split_overlap(ds);
  std::string text_rate;
  if (st.text_s > 0) {
    text_rate = fmt::format("; {} of CSV text at {:.0f} MB/s", format_bytes(st.text_bytes),
                            st.text_bytes / st.text_s / 1e6);
  }
  log_info(
      "{}: {} layout, {} nodes, {} edges ({} listed, {} self loops and {} duplicates "
      "dropped{}), {}, {} classes, split {}/{}/{}; read in {:.2f} s{}",
      dir, ds.layout, ds.num_nodes, ds.num_edges(), ds.input_edges, ds.self_loops_dropped,
      ds.duplicates_dropped,
      options.undirected                       ? ", reverse edges added"
      : ds.hetero && options.reverse_relations ? ", reverse relations added"
                                               : "",
      ds.hetero ? std::string("features per type") : fmt::format("{} features", ds.feat_dim()),
      ds.num_classes, ds.train_idx.size(), ds.valid_idx.size(), ds.test_idx.size(), total.seconds(),
      text_rate);
  if (ds.hetero) {
    std::string types, relations;
    for (const NodeType& t : ds.hetero->node_types) {
      types += fmt::format("{}{} {}{}", types.empty() ? "" : ", ", t.name, t.count,
                           t.feat_dim() > 0 ? fmt::format(" ({} features)", t.feat_dim()) : "");
    }
    for (int r = 0; r < ds.hetero->num_relations(); ++r) {
      relations += fmt::format("{}{} {}", relations.empty() ? "" : ", ", ds.hetero->triplet(r),
                               ds.hetero->relations[r].num_edges);
    }
    log_info("{}: heterogeneous: types {}; target '{}'; relations {}", dir, types,
             ds.hetero->node_types[ds.hetero->target_type].name, relations);
  }
  log_debug("{}: read edges {:.2f} s, build graph {:.2f} s, features {:.2f} s, rest {:.2f} s", dir,
            st.read_edges_s, st.build_graph_s, st.read_features_s, st.read_rest_s);
  return ds;
}

}  // namespace partita::data
