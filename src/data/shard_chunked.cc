// read_dataset_shard (partita/data/shard.h) for the chunked layout
// (partita/data/chunked_layout.h): every rank checks the manifest and the header of every
// chunk file against it, then reads its share of the edge chunks, the labels of its node
// block and the split ids in it; features stay mapped, read row ranges on demand.
#include <algorithm>

#include "numpy_files.h"
#include "partita/core/error.h"
#include "readers.h"
#include "shard_files.h"

namespace partita::data {
namespace {

// A chunk file of `rows` edges: int64 [rows, 2] in C order.
MappedNpy open_edge_chunk(const std::string& dir, const ChunkFile& c) {
  MappedNpy f = MappedNpy::open(dir + "/" + c.file);
  f.expect(DType::kInt64, 2);
  PARTITA_CHECK(f.dim(0) == c.rows && f.dim(1) == 2 && !f.header().fortran_order, FormatError,
                "{}: shape {}{}, but the manifest says ({}, 2) in C order", f.path(), f.shape(),
                f.header().fortran_order ? " in Fortran order" : "", c.rows);
  return f;
}

// The features of `features` (every chunk checked against the manifest).
ShardFeatures chunked_features(const std::string& dir, const ChunkedFeatures& features) {
  std::vector<ChunkFile> files;  // paths from here
  for (const ChunkFile& c : features.chunks) files.push_back({dir + "/" + c.file, c.rows});
  return open_features(files, features.dtype, features.dim, "the manifest");
}

// Labels of rows [begin, end) of the label chunks (every chunk's header checked), each in
// [-1, num_classes), written to out[0, end - begin); node ids in messages are rows +
// id_offset.
void read_label_rows(const std::string& dir, const ChunkedManifest& m, int64_t begin, int64_t end,
                     int64_t id_offset, int64_t* out) {
  int64_t first = 0;
  for (const ChunkFile& c : m.labels) {
    const MappedNpy f = MappedNpy::open(dir + "/" + c.file);
    f.expect(DType::kInt64, 1);
    PARTITA_CHECK(f.dim(0) == c.rows, FormatError, "{}: {} labels, but the manifest says {}",
                  f.path(), f.dim(0), c.rows);
    const int64_t lo = std::max(begin, first), hi = std::min(end, first + c.rows);
    if (lo < hi) f.copy_elements(lo - first, hi - first, out + (lo - begin));
    for (int64_t i = lo; i < hi; ++i)
      PARTITA_CHECK(out[i - begin] >= -1 && out[i - begin] < m.num_classes, FormatError,
                    "{}: row {} (node {}): label {} is outside [-1, {}) (num_classes in the "
                    "manifest)",
                    f.path(), i - first, i + id_offset, out[i - begin], m.num_classes);
    first += c.rows;
  }
}

// A split file: int64 [n], strictly ascending, in [0, count); returned + id_offset.
std::vector<int64_t> read_sorted_split(const std::string& path, int64_t count, int64_t id_offset) {
  const MappedNpy f = MappedNpy::open(path);
  f.expect(DType::kInt64, 1);
  std::vector<int64_t> ids(static_cast<size_t>(f.dim(0)));
  f.copy_elements(0, f.dim(0), ids.data());
  for (size_t i = 0; i < ids.size(); ++i) {
    PARTITA_CHECK(ids[i] >= 0 && ids[i] < count, FormatError,
                  "{}: entry {}: node id {} is outside [0, {})", path, i, ids[i], count);
    PARTITA_CHECK(i == 0 || ids[i] > ids[i - 1], FormatError,
                  "{}: entry {}: node id {} follows {}; split ids must be strictly ascending in "
                  "the chunked layout",
                  path, i, ids[i], ids[i - 1]);
  }
  // After the checks: offsetting in the loop compared an id with its offset predecessor.
  for (int64_t& v : ids) v += id_offset;
  return ids;
}

// One edge chunk with the relation it belongs to (typed) and its id ranges.
struct EdgeChunk {
  MappedNpy file;
  int32_t relation = 0;
  int64_t src_count = 0, dst_count = 0, src_offset = 0, dst_offset = 0;
};

// The chunk files of `arrays` appended to `files` (one list per array, in order), each file's
// header checked against the manifest (data/edge_arrays.h's dtypes and shapes).
void add_array_chunks(const std::string& dir, const std::vector<ChunkedArray>& arrays,
                      std::vector<std::vector<ArrayFile>>& files) {
  files.resize(arrays.size());
  for (size_t k = 0; k < arrays.size(); ++k)
    for (const ChunkFile& c : arrays[k].chunks)
      files[k].push_back(check_chunk_file(dir + "/" + c.file, arrays[k].name, arrays[k].dtype,
                                          arrays[k].dim, c.rows));
}

}  // namespace

DatasetShard read_chunked_shard(const std::string& dir, int rank, int ranks) {
  const ChunkedManifest m = read_chunked_manifest(dir);
  DatasetShard s;
  set_block(s, m.num_nodes, rank, ranks);
  s.num_classes = m.num_classes;

  std::vector<EdgeChunk> chunks;
  // Optional arrays: per array, its chunk files in listing (node id) order.
  std::vector<std::vector<ArrayFile>> edge_files, node_files;
  int64_t label_count = m.num_nodes, label_offset = 0;
  if (m.typed()) {
    HeteroSchema& schema = s.hetero.emplace();
    int64_t offset = 0;
    for (const ChunkedNodeType& t : m.node_types) {
      schema.node_types.push_back({t.name, t.count, offset, {}});
      offset += t.count;
      s.type_features.push_back(t.features ? chunked_features(dir, *t.features) : ShardFeatures{});
      add_array_chunks(dir, t.node_arrays, node_files);
    }
    for (size_t r = 0; r < m.relations.size(); ++r) {
      const ChunkedRelation& cr = m.relations[r];
      const Relation& rel = schema.relations.emplace_back(Relation{
          cr.name, schema.find_type(cr.src_type), schema.find_type(cr.dst_type), 0, false});
      const NodeType& st = schema.node_types[rel.src_type];
      const NodeType& dt = schema.node_types[rel.dst_type];
      for (const ChunkFile& c : cr.edges)
        chunks.push_back({open_edge_chunk(dir, c), static_cast<int32_t>(r), st.count, dt.count,
                          st.offset, dt.offset});
      add_array_chunks(dir, cr.edge_arrays, edge_files);
    }
    schema.target_type = schema.find_type(m.target);
    label_count = schema.node_types[schema.target_type].count;
    label_offset = schema.node_types[schema.target_type].offset;
  } else {
    s.features = chunked_features(dir, *m.features);
    for (const ChunkFile& c : m.edges)
      chunks.push_back({open_edge_chunk(dir, c), 0, m.num_nodes, m.num_nodes, 0, 0});
    add_array_chunks(dir, m.edge_arrays, edge_files);
    add_array_chunks(dir, m.node_arrays, node_files);
  }

  // Labels of the block (typed: its target-type part; -1 elsewhere).
  const int64_t lo = std::clamp(s.node_begin - label_offset, int64_t{0}, label_count);
  const int64_t hi = std::clamp(s.node_end - label_offset, int64_t{0}, label_count);
  s.labels.assign(static_cast<size_t>(s.node_end - s.node_begin), -1);
  read_label_rows(dir, m, lo, hi, label_offset,
                  s.labels.data() + (lo + label_offset - s.node_begin));
  // The label chunk holding node v's label.
  const auto label_file = [&](int64_t v) {
    int64_t first = label_offset;
    for (const ChunkFile& c : m.labels) {
      if (v < first + c.rows) return dir + "/" + c.file;
      first += c.rows;
    }
    return dir + "/" + kChunkedManifest;
  };
  const std::string* split_files[] = {&m.train_idx, &m.valid_idx, &m.test_idx};
  std::vector<int64_t>* splits[] = {&s.train_idx, &s.valid_idx, &s.test_idx};
  const char* names[] = {"train", "valid", "test"};
  for (int i = 0; i < 3; ++i) {
    const std::string path = dir + "/" + *split_files[i];
    *splits[i] =
        ids_in_block(read_sorted_split(path, label_count, label_offset), s.node_begin, s.node_end);
    check_split_labeled(s.labels, s.node_begin, *splits[i], label_file, names[i], path);
  }

  // This rank's edge chunks.
  std::vector<int64_t> rows;
  for (const EdgeChunk& c : chunks) s.input_edges_total += rows.emplace_back(c.file.dim(0));
  const auto [first, last] = chunk_share(rows, rank, ranks);
  int64_t share_rows = 0;
  for (size_t i = first; i < last; ++i) share_rows += rows[i];
  for (auto* v : {&s.src, &s.dst}) v->reserve(static_cast<size_t>(share_rows));
  if (m.typed()) s.edge_relation.reserve(static_cast<size_t>(share_rows));
  for (size_t i = first; i < last; ++i) {
    const EdgeChunk& c = chunks[i];
    read_edge_rows(c.file, EdgeForm::kRows, rows[i], 0, rows[i], c.src_count, c.dst_count,
                   c.src_offset, c.dst_offset, {&s.src, &s.dst});
    if (m.typed()) s.edge_relation.resize(s.src.size(), c.relation);
  }
  // The arrays of the same rows (edge chunks are the listing, relations end to end), and of
  // the node block (node chunks, types end to end).
  for (size_t i = 0; i < first; ++i) s.first_edge += rows[i];
  for (const std::vector<ArrayFile>& files : edge_files)
    s.edge_arrays.push_back(read_joined_rows(files, s.first_edge, s.first_edge + share_rows));
  for (const std::vector<ArrayFile>& files : node_files)
    s.node_arrays.push_back(read_joined_rows(files, s.node_begin, s.node_end));
  return s;
}

}  // namespace partita::data
