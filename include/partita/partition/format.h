#pragma once
// The on-disk partition format (docs/partition-format.md): metadata in partita.json,
// arrays in .npy files. Reading is split in two:
//  - read_meta + open_part: the fast start-up path. Parses and cross-checks the metadata,
//    maps a part's arrays and checks their dtype and shape; never reads array data.
//  - verify_partition: the slow, thorough path (`partita info --verify`). Reads every byte.
// Every problem throws FormatError (IoError for an unreadable directory) naming the file.
// All functions are thread-safe on distinct directories and read-only on existing ones.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "partita/core/npy.h"
#include "partita/partition/partition.h"

namespace partita::partition {

// Version of the format this build writes and the newest it reads. Readers refuse newer
// versions; a change that an older reader would misread bumps it (see the spec).
// Version 2 adds typed (heterogeneous) partitions; homogeneous partitions are still written
// as version 1, so directories and readers of version 1 are unaffected.
constexpr int kFormatVersion = 2;
constexpr int kHomogeneousFormatVersion = 1;
constexpr const char* kFormatName = "partita-partition";  // value of the "format" key
constexpr const char* kMetaFileName = "partita.json";
constexpr const char* kNodeMapFile = "node_map.npy";

// The arrays every part directory of a homogeneous partition holds, in the order they are
// listed in partita.json. A typed partition holds indptr, indices, etype, feat_<TYPE> per
// featured type (no feat), label, train_idx, valid_idx, test_idx.
constexpr const char* kPartArrayNames[] = {"indptr",    "indices",   "feat",    "label",
                                           "train_idx", "valid_idx", "test_idx"};

// Optional arrays (docs/partition-format.md, "Edge and node arrays"), in every part when the
// dataset had them (data/edge_arrays.h): edge_time int64 [e], edge_weight float32 [e] (finite,
// > 0), edge_feat float32/float16/bfloat16 [e, d], aligned with indices.npy; node_time int64
// [n], aligned with label.npy. With edge_time a row lists its sources ascending by (original
// source, time), repeats allowed; typed parts by (relation, original source, time).
constexpr const char* kEdgeArrayNames[] = {"edge_time", "edge_weight", "edge_feat"};
constexpr const char* kNodeArrayNames[] = {"node_time"};

// Link-prediction splits (PartitionSummary::edge_split set): int64 [k, 2] (src, dst) pairs
// of global NEW ids. kEdgeSplitFiles lie under the partition directory in this order (held-out
// positives and their negatives); each part's training pairs are part_file(p,
// kTrainEdgesName), the pairs whose destination the part owns, sorted by (dst, src).
constexpr const char* kEdgeSplitFiles[] = {"edges/valid_pos.npy", "edges/valid_neg.npy",
                                           "edges/test_pos.npy", "edges/test_neg.npy"};
constexpr const char* kTrainEdgesName = "train_edges";
// Splits by time (EdgeSplitStats::by_time) also hold each pair's time: int64 [k], row i the
// time of row i of the pair file of the same index (kEdgeSplitFiles[i] ->
// kEdgeSplitTimeFiles[i]; part_file(p, kTrainEdgesName) -> part_file(p,
// kTrainEdgeTimeName)). Training pairs are then sorted by (dst, src, time), a pair repeated
// at different times kept once per time.
constexpr const char* kEdgeSplitTimeFiles[] = {
    "edges/valid_pos_time.npy", "edges/valid_neg_time.npy", "edges/test_pos_time.npy",
    "edges/test_neg_time.npy"};
constexpr const char* kTrainEdgeTimeName = "train_edge_time";

// "part<p>/<name>.npy": the path of a part's array relative to the partition directory.
std::string part_file(int part, const std::string& name);
// "feat_<type>": the array name of a typed part's features of node type `type_name`.
std::string type_feature_name(const std::string& type_name);
// True when `name` can name a node type in file names: 1 to 128 of [A-Za-z0-9_-].
bool valid_type_name(const std::string& name);

// Typed (heterogeneous) partitions (format version 2; data/hetero.h for the conventions).
// New ids of one node type inside one part are contiguous: part p's nodes of type t are
// [type_starts[p][t], type_starts[p][t+1]) (a part keeps its nodes in original-id order and
// homogenised original ids are grouped by type).
struct TypedNodeType {
  std::string name;      // valid_type_name()
  int64_t count = 0;     // nodes of this type over all parts (> 0)
  int64_t feat_dim = 0;  // 0: the type has no features (and no feat_<name>.npy)
  // Homogenised original ids of the type: [offset, offset + count) (sum of earlier counts).
  int64_t offset = 0;
};

struct TypedRelation {
  std::string name;  // as in the dataset, "rev_<name>" for a reverse relation
  int src_type = 0;  // index into TypedMeta::node_types
  int dst_type = 0;
  int64_t num_edges = 0;  // stored entries of this relation over all parts
  bool reverse = false;   // added as the reverse of another relation
};

struct TypedMeta {
  std::vector<TypedNodeType> node_types;
  std::vector<TypedRelation> relations;
  int target_type = 0;            // the labelled type: labels, splits
  bool reverse_relations = true;  // reverse relations were added (partition --no-reverse: false)
  // [num_parts][num_types + 1]: type_starts[p][0] = ranges[p], non-decreasing,
  // type_starts[p][T] = ranges[p+1].
  std::vector<std::vector<int64_t>> type_starts;

  int num_types() const { return static_cast<int>(node_types.size()); }
  int num_relations() const { return static_cast<int>(relations.size()); }
  // New ids of type `type` in part `part`: [first, second).
  std::pair<int64_t, int64_t> type_range(int part, int type) const {
    return {type_starts[part][type], type_starts[part][type + 1]};
  }
  int64_t part_type_nodes(int part, int type) const {
    return type_starts[part][type + 1] - type_starts[part][type];
  }
  // The type of new id `gid` owned by `part` (binary search over the part's starts).
  int type_of(int part, int64_t gid) const;
  // The type of homogenised original id `original` (binary search over the offsets).
  int type_of_original(int64_t original) const;
  // The index of the type named `name`, or -1.
  int find_type(const std::string& name) const;
  // "src___name___dst" (OGB's folder name of a relation).
  std::string triplet(int relation) const;
};

// One entry of partita.json's "files": what the file must hold.
struct FileEntry {
  std::string path;  // relative to the partition directory, '/'-separated
  DType dtype = DType::kInt64;
  std::vector<int64_t> shape;
  uint32_t crc32 = 0;  // zlib CRC-32 of the whole .npy file (header included)
};

// Everything in partita.json, parsed and cross-checked by read_meta: ranges start at 0,
// never decrease and end at num_nodes; every expected file is listed with the dtype and
// shape the counts imply; the per-part figures in `summary` agree with those shapes and
// sum to the totals.
struct PartitionMeta {
  // As read; meta_to_json writes 2 for a typed partition and 1 otherwise, whatever it holds.
  int version = kHomogeneousFormatVersion;
  int num_parts = 0;
  int64_t num_nodes = 0;
  int64_t num_edges = 0;  // stored in-edges over all parts
  int64_t feat_dim = 0;   // typed partitions: 0 (features per type, TypedNodeType::feat_dim)
  // float32, float16 or bfloat16 ("feature_dtype" in partita.json; absent: float32).
  DType feature_dtype = DType::kFloat32;
  int64_t num_classes = 0;
  std::vector<int64_t> ranges;  // num_parts + 1: part p owns new ids [ranges[p], ranges[p+1])
  std::string method;           // method_name() of the method used, e.g. "metis"
  uint64_t seed = 0;
  bool balance_train = false;
  bool balance_edges = false;
  bool undirected = false;
  std::string dataset;       // dataset directory the partition was made from
  PartitionSummary summary;  // figures of the run (phase times and peak RSS vary per run)
  std::vector<FileEntry> files;
  // Typed partitions ("hetero" in partita.json, version 2) only.
  std::optional<TypedMeta> typed;

  int64_t part_nodes(int part) const { return ranges[part + 1] - ranges[part]; }
  // The part owning global new id `gid` (binary search over ranges); gid in [0, num_nodes).
  int owner(int64_t gid) const;
  // The node type of `gid` in [0, num_nodes): owner, then the owner's type starts; 0 for a
  // homogeneous partition.
  int node_type(int64_t gid) const;
  // The entry of `path`; throws FormatError naming partita.json when it is not listed.
  const FileEntry& file(const std::string& path) const;
  // Whether `path` is listed.
  bool has_file(const std::string& path) const;
  // Whether the parts hold the optional array `name` (kEdgeArrayNames, kNodeArrayNames):
  // read_meta checks that every part lists it or none does.
  bool has_array(const std::string& name) const { return has_file(part_file(0, name)); }
};

// Reads and validates `<dir>/partita.json`. Throws IoError when it cannot be read and
// FormatError "<dir>/partita.json: <problem>" for invalid JSON, a missing key, a wrong type,
// inconsistent ranges, files or counts, or a version newer than kFormatVersion.
PartitionMeta read_meta(const std::string& dir);
// Same, from JSON text; `path` names the source in messages.
PartitionMeta parse_meta(const std::string& text, const std::string& path);

// Serializes `meta` (keys in a fixed order; identical meta gives identical text).
std::string meta_to_json(const PartitionMeta& meta);
// Writes `<dir>/partita.json` atomically (temp file + rename). Throws IoError.
void write_meta(const std::string& dir, const PartitionMeta& meta);

// A part's arrays, mapped read-only. Shapes: indptr int64 [n+1], indices int64 [e],
// feat feature_dtype [n, feat_dim], label int64 [n], *_idx int64 [k] (see the spec).
// Typed partitions: feat stays unopened (empty); etype int32 [e] holds each entry's relation
// and type_feat[t] the feature_dtype [n_{p,t}, feat_dim_t] rows of type t (unopened for a
// type without features).
// The optional arrays (kEdgeArrayNames, kNodeArrayNames) are opened when listed, else empty.
struct PartFiles {
  NpyArray indptr, indices, feat, label, train_idx, valid_idx, test_idx;
  NpyArray edge_time, edge_weight, edge_feat, node_time;
  NpyArray etype;
  std::vector<NpyArray> type_feat;
};

// Maps part `part` of the partition in `dir` described by `meta` (from read_meta) and checks
// each array's dtype and shape against the metadata. Reads no data and no checksum.
// Throws FormatError naming the file; Error when `part` is not in [0, num_parts).
PartFiles open_part(const std::string& dir, const PartitionMeta& meta, int part);

struct VerifyReport {
  int64_t files = 0;  // .npy files checked
  int64_t bytes = 0;  // their total size
};

// Checks a whole partition directory: the metadata (read_meta), then for every listed file
// its presence, .npy header, dtype, shape and CRC-32, then the contents: node_map is a
// permutation of [0, num_nodes); each indptr runs from 0 to its edge count without
// decreasing; every source id lies in [0, num_nodes) and every row is strictly ascending;
// labels lie in [0, num_classes); split ids are strictly ascending and owned by the part.
// Typed partitions: each new id's original id lies in its type's homogenised range; relation
// ids lie in range, rows are sorted by (relation, original source) and unique within a
// relation, each entry's source and destination types are its relation's; per-relation
// entry counts match the metadata; labels are -1 exactly outside the target type; split ids
// are of the target type. Optional arrays: weights finite and > 0, edge features finite, and
// with edge_time rows ascending by (original source, time) instead of strictly by source.
// The first problem throws FormatError "<file>: <problem>". Uses up to `threads` threads.
VerifyReport verify_partition(const std::string& dir, int threads = 0);

}  // namespace partita::partition
