// read_dataset_shard (partita/data/shard.h) for the Partita numpy layouts, homogeneous and
// typed, and the layout detection. The chunked layout: shard_chunked.cc.
#include <algorithm>
#include <filesystem>
#include <memory>

#include "numpy_files.h"
#include "partita/core/error.h"
#include "partita/data/chunked_layout.h"
#include "partita/data/shard.h"
#include "readers.h"
#include "shard_common.h"
#include "shard_files.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kLabelBatch = int64_t{1} << 20;

// Scans all of label file `f` (int64 [count]) in bounded batches: every label in
// [-1, kMaxLabel] (-1 only if `unlabelled` allowed); keeps the labels of [begin, end).
// Returns max label + 1.
int64_t scan_labels(const MappedNpy& f, int64_t begin, int64_t end, Unlabelled unlabelled,
                    std::vector<int64_t>& kept) {
  const int64_t count = f.dim(0);
  std::vector<int64_t> batch;
  std::vector<int64_t> all;
  int64_t max_label = -1;
  for (int64_t b = 0; b < count; b += kLabelBatch) {
    const int64_t n = std::min(kLabelBatch, count - b);
    batch.resize(static_cast<size_t>(n));
    f.copy_elements(b, b + n, batch.data());
    // validate_labels words the message; give it the batch with the right node numbers.
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = batch[i];
      const bool ok = (v >= 0 || (unlabelled == Unlabelled::kAllowed && v == -1)) && v <= kMaxLabel;
      if (!ok) {
        throw FormatError(fmt::format(
            "{}: node {} has label {}; labels must be in [0, {}]{}", f.path(), b + i, v, kMaxLabel,
            unlabelled == Unlabelled::kAllowed ? " (or -1: unlabelled, in no split)" : ""));
      }
      max_label = std::max(max_label, v);
    }
    const int64_t lo = std::max(b, begin), hi = std::min(b + n, end);
    if (lo < hi) kept.insert(kept.end(), batch.begin() + (lo - b), batch.begin() + (hi - b));
  }
  PARTITA_CHECK(max_label >= 0, FormatError,
                "{}: every node has label -1 (unlabelled); at least one needs a class", f.path());
  return max_label + 1;
}

// The numpy layout's link-prediction split, this rank's rows of each file.
std::optional<EdgeSplitArrays> read_edge_split_share(const std::string& dir, int64_t num_nodes,
                                                     int rank, int ranks) {
  constexpr const char* kFiles[] = {"train_edges.npy", "valid_edges.npy", "test_edges.npy",
                                    "valid_neg.npy", "test_neg.npy"};
  std::error_code ec;
  int present = 0;
  for (const char* name : kFiles) present += fs::exists(dir + "/" + name, ec) ? 1 : 0;
  if (present == 0) return std::nullopt;
  EdgeSplitArrays split;
  std::vector<int64_t>* targets[] = {&split.train, &split.valid, &split.test, &split.valid_neg,
                                     &split.test_neg};
  for (size_t i = 0; i < 5; ++i) {
    const std::string path = dir + "/" + kFiles[i];
    PARTITA_CHECK(fs::exists(path, ec), FormatError,
                  "{}: missing (an edge split needs train_edges.npy, valid_edges.npy, "
                  "test_edges.npy, valid_neg.npy and test_neg.npy)",
                  path);
    const MappedNpy f = MappedNpy::open(path);
    f.expect(DType::kInt64, 2);
    PARTITA_CHECK(f.dim(1) == 2 && !f.header().fortran_order, FormatError,
                  "{}: expected shape (k, 2) in C order, found {}", path, f.shape());
    PARTITA_CHECK(i == 0 || f.dim(0) > 0, FormatError, "{}: no rows", path);
    const int64_t k = f.dim(0);
    const auto [b, e] = node_block(k, rank, ranks);
    std::vector<int64_t> src, dst;
    src.reserve(static_cast<size_t>(e - b));
    dst.reserve(static_cast<size_t>(e - b));
    read_edge_rows(f, EdgeForm::kRows, k, b, e, num_nodes, num_nodes, 0, 0, {&src, &dst});
    for (size_t j = 0; j < src.size(); ++j) {
      PARTITA_CHECK(src[j] != dst[j], FormatError, "{}: row {}: self loop ({}, {})", path,
                    b + static_cast<int64_t>(j), src[j], src[j]);
      targets[i]->push_back(src[j]);
      targets[i]->push_back(dst[j]);
    }
  }
  return split;
}

DatasetShard read_numpy_shard(const std::string& dir, int rank, int ranks) {
  const NumpyLayoutFiles files = find_numpy_files(dir);
  DatasetShard s;
  auto feat = std::make_shared<MappedNpy>(MappedNpy::open(files.feat));
  const DType f32 = DType::kFloat32;
  feat->expect(f32, 2);
  const int64_t n = feat->dim(0);
  PARTITA_CHECK(n > 0, FormatError, "{}: no rows (the dataset has no nodes)", files.feat);
  check_feature_file(*feat, &f32, n, files.feat);
  set_block(s, n, rank, ranks);
  s.features.dim = feat->dim(1);
  s.features.dtype = f32;
  s.features.read = make_feature_reader({{feat, 0}}, n, s.features.dim, f32);

  const MappedNpy label = MappedNpy::open(files.label);
  label.expect(DType::kInt64, 1);
  PARTITA_CHECK(label.dim(0) == n, FormatError, "{}: {} labels, but {} has {} rows", files.label,
                label.dim(0), files.feat, n);
  s.num_classes = scan_labels(label, s.node_begin, s.node_end, Unlabelled::kAllowed, s.labels);
  std::vector<int64_t>* splits[] = {&s.train_idx, &s.valid_idx, &s.test_idx};
  for (int i = 0; i < 3; ++i) {
    *splits[i] =
        ids_in_block(read_numpy_split(files.splits[i], n, files.feat), s.node_begin, s.node_end);
    check_split_labeled(
        s, *splits[i], [&](int64_t) { return files.label; }, files.splits[i].path);
  }
  s.edge_split = read_edge_split_share(dir, n, rank, ranks);

  const MappedNpy edges = MappedNpy::open(files.edges);
  PARTITA_CHECK(edges.dtype() == DType::kInt64 || edges.dtype() == DType::kInt32, FormatError,
                "{}: expected dtype int64 (or int32), found {}", files.edges,
                dtype_name(edges.dtype()));
  PARTITA_CHECK(edges.ndim() == 2, FormatError, "{}: expected 2 dimension(s), found shape {}",
                files.edges, edges.shape());
  EdgeForm form = EdgeForm::kRows;
  int64_t num_edges = 0;
  if (files.edge_index) {
    PARTITA_CHECK(edges.dim(0) == 2, FormatError,
                  "{}: expected shape (2, E) (PyG's edge_index: sources, then destinations), "
                  "found {}",
                  files.edges, edges.shape());
    PARTITA_CHECK(!edges.header().fortran_order, FormatError,
                  "{}: a Fortran-order edge_index is not read in shares; save it in C order",
                  files.edges);
    form = EdgeForm::kColumns;
    num_edges = edges.dim(1);
  } else {
    PARTITA_CHECK(
        edges.dim(1) == 2, FormatError, "{}: expected shape (E, 2), found {}{}", files.edges,
        edges.shape(),
        edges.dim(0) == 2 ? " (a PyG edge_index of shape (2, E) goes in edge_index.npy)" : "");
    form = edges.header().fortran_order ? EdgeForm::kColumns : EdgeForm::kRows;
    num_edges = edges.dim(0);
  }
  if (num_edges == 0) throw_no_edges(files.edges);
  s.input_edges_total = num_edges;
  const auto [b, e] = node_block(num_edges, rank, ranks);
  s.src.reserve(static_cast<size_t>(e - b));
  s.dst.reserve(static_cast<size_t>(e - b));
  read_edge_rows(edges, form, num_edges, b, e, n, n, 0, 0, {&s.src, &s.dst});
  return s;
}

DatasetShard read_numpy_hetero_shard(const std::string& dir, int rank, int ranks) {
  Dataset meta;
  meta.hetero.emplace();
  read_hetero_json(meta, dir + "/hetero.json");
  DatasetShard s;
  s.hetero = std::move(meta.hetero);
  HeteroSchema& schema = *s.hetero;
  set_block(s, meta.num_nodes, rank, ranks);
  const NodeType& target = schema.node_types[schema.target_type];

  const std::string label_path = dir + "/label.npy";
  const MappedNpy label = MappedNpy::open(label_path);
  label.expect(DType::kInt64, 1);
  PARTITA_CHECK(label.dim(0) == target.count, FormatError,
                "{}: {} labels, but hetero.json says type '{}' has {} nodes", label_path,
                label.dim(0), target.name, target.count);
  // The block's target-type part, in target-local ids.
  const int64_t lo = std::clamp(s.node_begin - target.offset, int64_t{0}, target.count);
  const int64_t hi = std::clamp(s.node_end - target.offset, int64_t{0}, target.count);
  std::vector<int64_t> target_labels;
  s.num_classes = scan_labels(label, lo, hi, Unlabelled::kRefused, target_labels);
  s.labels.assign(static_cast<size_t>(s.node_end - s.node_begin), -1);
  std::copy(target_labels.begin(), target_labels.end(),
            s.labels.begin() + (lo + target.offset - s.node_begin));
  const char* names[] = {"train", "valid", "test"};
  std::vector<int64_t>* splits[] = {&s.train_idx, &s.valid_idx, &s.test_idx};
  for (int i = 0; i < 3; ++i) {
    const std::string path = dir + "/" + names[i] + "_idx.npy";
    const MappedNpy f = MappedNpy::open(path);
    f.expect(DType::kInt64, 1);
    std::vector<int64_t> ids(static_cast<size_t>(f.dim(0)));
    f.copy_elements(0, f.dim(0), ids.data());
    validate_split(ids, target.count, path, /*lines=*/false);
    *splits[i] =
        ids_in_block(to_homogenised(std::move(ids), target.offset), s.node_begin, s.node_end);
  }

  // Edges: the relations' files one after another; this rank reads its rows of the whole.
  std::vector<MappedNpy> files;
  int64_t total = 0;
  for (int r = 0; r < schema.num_relations(); ++r) {
    const std::string path = dir + "/edges/" + schema.triplet(r) + ".npy";
    MappedNpy f = MappedNpy::open(path);
    f.expect(DType::kInt64, 2);
    PARTITA_CHECK(f.dim(1) == 2, FormatError, "{}: expected shape (E, 2), found {}", path,
                  f.shape());
    total += f.dim(0);
    files.push_back(std::move(f));
  }
  if (total == 0) throw_no_edges(dir + "/edges/" + schema.triplet(0) + ".npy");
  s.input_edges_total = total;
  const auto [first, last] = node_block(total, rank, ranks);
  for (auto* v : {&s.src, &s.dst}) v->reserve(static_cast<size_t>(last - first));
  s.edge_relation.reserve(static_cast<size_t>(last - first));
  int64_t offset = 0;
  for (int r = 0; r < schema.num_relations(); ++r) {
    const MappedNpy& f = files[r];
    const int64_t b = std::clamp(first - offset, int64_t{0}, f.dim(0));
    const int64_t e = std::clamp(last - offset, int64_t{0}, f.dim(0));
    offset += f.dim(0);
    if (b >= e) continue;
    const NodeType& st = schema.node_types[schema.relations[r].src_type];
    const NodeType& dt = schema.node_types[schema.relations[r].dst_type];
    read_edge_rows(f, f.header().fortran_order ? EdgeForm::kColumns : EdgeForm::kRows, f.dim(0), b,
                   e, st.count, dt.count, st.offset, dt.offset, {&s.src, &s.dst});
    s.edge_relation.resize(s.src.size(), r);
  }

  const std::string feat_dir = dir + "/feat";
  std::error_code ec;
  if (fs::is_directory(feat_dir, ec)) {
    for (const auto& entry : fs::directory_iterator(feat_dir, ec)) {
      const fs::path p = entry.path();
      PARTITA_CHECK(p.extension() == ".npy" && schema.find_type(p.stem().string()) >= 0,
                    FormatError, "{}: not <node type>.npy for a node type of hetero.json",
                    p.string());
    }
  }
  const DType f32 = DType::kFloat32;
  for (const NodeType& type : schema.node_types) {
    ShardFeatures features;
    const std::string path = feat_dir + "/" + type.name + ".npy";
    if (fs::exists(path, ec)) {
      auto f = std::make_shared<MappedNpy>(MappedNpy::open(path));
      features.dim =
          check_feature_file(*f, &f32, type.count, "hetero.json's count of '" + type.name + "'");
      features.read = make_feature_reader({{f, 0}}, type.count, features.dim, f32);
    }
    s.type_features.push_back(std::move(features));
  }
  return s;
}

}  // namespace

void set_block(DatasetShard& s, int64_t num_nodes, int rank, int ranks) {
  s.rank = rank;
  s.ranks = ranks;
  s.num_nodes = num_nodes;
  std::tie(s.node_begin, s.node_end) = node_block(num_nodes, rank, ranks);
}

std::vector<int64_t> ids_in_block(const std::vector<int64_t>& sorted_ids, int64_t begin,
                                  int64_t end) {
  return {std::lower_bound(sorted_ids.begin(), sorted_ids.end(), begin),
          std::lower_bound(sorted_ids.begin(), sorted_ids.end(), end)};
}

void check_split_labeled(const DatasetShard& s, const std::vector<int64_t>& ids,
                         const std::function<std::string(int64_t)>& label_file,
                         const std::string& split_source) {
  for (int64_t v : ids) {
    PARTITA_CHECK(s.labels[v - s.node_begin] >= 0, FormatError,
                  "{}: node {} has label -1 (unlabelled) but is in the split {}; a node in a "
                  "split needs a label",
                  label_file(v), v, split_source);
  }
}

DatasetShard read_dataset_shard(const std::string& dir, int rank, int ranks) {
  PARTITA_CHECK(ranks >= 1 && rank >= 0 && rank < ranks, Error, "internal: rank {} of {} ranks",
                rank, ranks);
  std::error_code ec;
  PARTITA_CHECK(fs::is_directory(dir, ec), IoError, "{}: not a directory", dir);
  DatasetShard s;
  if (looks_like_chunked_layout(dir)) {
    s = read_chunked_shard(dir, rank, ranks);
    s.layout = "chunked";
  } else if (fs::exists(dir + "/raw", ec)) {
    throw FormatError(fmt::format(
        "{}: OGB's csv.gz layout cannot be read in shares (a gzip stream has no random "
        "access, so every rank would decompress all of it); convert it once, streaming, with "
        "`partita generate --from-ogb {} --out DIR` (the chunked layout), or partition it in "
        "one process (partita partition without mpirun)",
        dir, dir));
  } else if (fs::exists(dir + "/hetero.json", ec)) {
    s = read_numpy_hetero_shard(dir, rank, ranks);
    s.layout = "numpy";
  } else if (looks_like_numpy_layout(dir)) {
    s = read_numpy_shard(dir, rank, ranks);
    s.layout = "numpy";
  } else {
    throw FormatError(fmt::format(
        "{}: not a dataset directory read in shares: expected manifest.json (chunked layout), "
        "edges.npy, feat.npy, ... (Partita numpy layout) or hetero.json (its typed form); "
        "docs/dataset-format.md",
        dir));
  }
  s.path = dir;
  return s;
}

}  // namespace partita::data
