// read_dataset_shard (partita/data/shard.h) for the Partita numpy layouts, homogeneous and
// typed, and the layout detection. The chunked layout: shard_chunked.cc.
#include <algorithm>
#include <filesystem>

#include "numpy_files.h"
#include "partita/core/error.h"
#include "readers.h"
#include "shard_files.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;

DatasetShard read_numpy_shard(const std::string& dir, int rank, int ranks) {
  const NumpyLayout layout = check_numpy_layout(dir);
  const NumpyLayoutFiles& files = layout.files;
  const int64_t n = layout.num_nodes;
  DatasetShard s;
  set_block(s, n, rank, ranks);
  s.features = open_features({{files.feat, n}}, DType::kFloat32, 0, files.feat);
  s.num_classes =
      scan_labels(files.label, s.node_begin, s.node_end, Unlabelled::kAllowed, s.labels);
  std::vector<int64_t>* splits[] = {&s.train_idx, &s.valid_idx, &s.test_idx};
  for (int i = 0; i < 3; ++i) {
    *splits[i] = ids_in_block(layout.splits[i], s.node_begin, s.node_end);
    check_split_labeled(
        s.labels, s.node_begin, *splits[i], [&](int64_t) { return files.label; },
        files.splits[i].name, files.splits[i].path);
  }
  s.edge_split = read_numpy_edge_split(dir, n, rank, ranks);
  s.input_edges_total = layout.num_edges;
  const auto [b, e] = node_block(layout.num_edges, rank, ranks);
  for (auto* v : {&s.src, &s.dst}) v->reserve(static_cast<size_t>(e - b));
  read_edge_rows(MappedNpy::open(files.edges),
                 layout.columns ? EdgeForm::kColumns : EdgeForm::kRows, layout.num_edges, b, e, n,
                 n, 0, 0, {&s.src, &s.dst});
  s.first_edge = b;
  for (const ArrayFile& f : layout.edge_arrays) s.edge_arrays.push_back(read_array_rows(f, b, e));
  for (const ArrayFile& f : layout.node_arrays)
    s.node_arrays.push_back(read_array_rows(f, s.node_begin, s.node_end));
  return s;
}

DatasetShard read_numpy_hetero_shard(const std::string& dir, int rank, int ranks) {
  Dataset meta;
  meta.hetero.emplace();
  read_hetero_json(meta, dir + "/hetero.json");
  DatasetShard s;
  s.hetero = std::move(meta.hetero);
  const HeteroSchema& schema = *s.hetero;
  set_block(s, meta.num_nodes, rank, ranks);
  const NumpyHeteroLayout files = check_numpy_hetero_layout(dir, schema);
  const NodeType& target = schema.node_types[schema.target_type];

  // The block's target-type labels, in target-local ids.
  const int64_t lo = std::clamp(s.node_begin - target.offset, int64_t{0}, target.count);
  const int64_t hi = std::clamp(s.node_end - target.offset, int64_t{0}, target.count);
  std::vector<int64_t> target_labels;
  s.num_classes = scan_labels(files.label, lo, hi, Unlabelled::kRefused, target_labels);
  s.labels.assign(static_cast<size_t>(s.node_end - s.node_begin), -1);
  std::copy(target_labels.begin(), target_labels.end(),
            s.labels.begin() + (lo + target.offset - s.node_begin));
  std::vector<int64_t>* splits[] = {&s.train_idx, &s.valid_idx, &s.test_idx};
  for (int i = 0; i < 3; ++i) *splits[i] = ids_in_block(files.splits[i], s.node_begin, s.node_end);

  // Edges: the relations' files one after another; this rank reads its rows of the whole.
  std::vector<MappedNpy> edges;
  for (const std::string& path : files.edges)
    s.input_edges_total += edges.emplace_back(MappedNpy::open(path)).dim(0);
  const auto [first, last] = node_block(s.input_edges_total, rank, ranks);
  for (auto* v : {&s.src, &s.dst}) v->reserve(static_cast<size_t>(last - first));
  s.edge_relation.reserve(static_cast<size_t>(last - first));
  int64_t offset = 0;
  for (int r = 0; r < schema.num_relations(); ++r) {
    const MappedNpy& f = edges[r];
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
  // Edge arrays: the same rows of the relations' files laid end to end; node arrays: the
  // block's rows of the types' files (homogenised ids are the types' ids end to end).
  s.first_edge = first;
  for (const std::vector<ArrayFile>& per_relation : files.edge_arrays)
    s.edge_arrays.push_back(read_joined_rows(per_relation, first, last));
  for (const std::vector<ArrayFile>& per_type : files.node_arrays)
    s.node_arrays.push_back(read_joined_rows(per_type, s.node_begin, s.node_end));

  for (int t = 0; t < schema.num_types(); ++t) {
    const NodeType& type = schema.node_types[t];
    const std::string& path = files.features[t];  // empty: a featureless type
    s.type_features.push_back(path.empty() ? ShardFeatures{}
                                           : open_features({{path, type.count}}, DType::kFloat32, 0,
                                                           "hetero.json's '" + type.name + "'"));
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

DatasetShard read_dataset_shard(const std::string& dir, int rank, int ranks) {
  PARTITA_CHECK(ranks >= 1 && rank >= 0 && rank < ranks, Error, "internal: rank {} of {} ranks",
                rank, ranks);
  std::error_code ec;
  PARTITA_CHECK(fs::is_directory(dir, ec), IoError, "{}: not a directory", dir);
  const bool chunked = looks_like_chunked_layout(dir);
  PARTITA_CHECK(chunked || !fs::exists(dir + "/raw", ec), FormatError,
                "{}: OGB's csv.gz layout cannot be read in shares (a gzip stream has no random "
                "access, so every rank would decompress all of it); convert it once, streaming, "
                "with `partita generate --from-ogb {} --out DIR` (the chunked layout), or "
                "partition it in one process (partita partition without mpirun)",
                dir, dir);
  const bool typed = !chunked && fs::exists(dir + "/hetero.json", ec);
  PARTITA_CHECK(chunked || typed || looks_like_numpy_layout(dir), FormatError,
                "{}: not a dataset directory read in shares: expected manifest.json (chunked "
                "layout), edges.npy, feat.npy, ... (Partita numpy layout) or hetero.json (its "
                "typed form); docs/dataset-format.md",
                dir);
  DatasetShard s = chunked ? read_chunked_shard(dir, rank, ranks)
                   : typed ? read_numpy_hetero_shard(dir, rank, ranks)
                           : read_numpy_shard(dir, rank, ranks);
  s.path = dir;
  s.layout = chunked ? "chunked" : "numpy";
  return s;
}

}  // namespace partita::data
