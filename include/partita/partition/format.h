#pragma once
// The on-disk partition format (docs/partition-format.md): metadata in partita.json,
// arrays in .npy files. Reading is split in two:
//  - read_meta + open_part: the fast start-up path. Parses and cross-checks the metadata,
//    maps a part's arrays and checks their dtype and shape; never reads array data.
//  - verify_partition: the slow, thorough path (`partita info --verify`). Reads every byte.
// Every problem throws FormatError (IoError for an unreadable directory) naming the file.
// All functions are thread-safe on distinct directories and read-only on existing ones.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/npy.h"
#include "partita/partition/partition.h"

namespace partita::partition {

// Version of the format this build writes and the newest it reads. Readers refuse newer
// versions; a change that an older reader would misread bumps it (see the spec).
constexpr int kFormatVersion = 1;
constexpr const char* kFormatName = "partita-partition";  // value of the "format" key
constexpr const char* kMetaFileName = "partita.json";
constexpr const char* kNodeMapFile = "node_map.npy";

// The arrays every part directory holds, in the order they are listed in partita.json.
constexpr const char* kPartArrayNames[] = {"indptr",    "indices",   "feat",    "label",
                                           "train_idx", "valid_idx", "test_idx"};

// "part<p>/<name>.npy": the path of a part's array relative to the partition directory.
std::string part_file(int part, const std::string& name);

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
  int version = kFormatVersion;
  int num_parts = 0;
  int64_t num_nodes = 0;
  int64_t num_edges = 0;  // stored in-edges over all parts
  int64_t feat_dim = 0;
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

  int64_t part_nodes(int part) const { return ranges[part + 1] - ranges[part]; }
  // The part owning global new id `gid` (binary search over ranges); gid in [0, num_nodes).
  int owner(int64_t gid) const;
  // The entry of `path`; throws FormatError naming partita.json when it is not listed.
  const FileEntry& file(const std::string& path) const;
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
struct PartFiles {
  NpyArray indptr, indices, feat, label, train_idx, valid_idx, test_idx;
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
// The first problem throws FormatError "<file>: <problem>". Uses up to `threads` threads.
VerifyReport verify_partition(const std::string& dir, int threads = 0);

}  // namespace partita::partition
