#pragma once
// The chunked dataset layout (docs/dataset-format.md, "Chunked layout"): a manifest.json
// plus numbered .npy chunk files, so that a dataset can be written piece by piece (by many
// processes) and read in shares (data/shard.h) without any process holding the whole graph.
//
// The manifest lists every chunk file with its row count; chunk files are plain .npy arrays
// whose shape must agree with it. Homogeneous: edges as int64 [k, 2] chunks, features as
// [rows, dim] chunks (float32, float16 or bfloat16) covering node ids in order, labels as
// int64 [rows] chunks likewise, splits as sorted int64 files. Typed: the same per node type
// (features) and per relation (edges, type-local ids), labels and splits of the target type.
// Chunk file names are relative to the dataset directory, without "..".
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "partita/core/npy.h"

namespace partita::data {

inline constexpr const char* kChunkedManifest = "manifest.json";
inline constexpr const char* kChunkedFormat = "partita-chunked";
// The newest version read. Version 2 adds the optional arrays (ChunkedArray); a manifest
// without them is written as version 1, so builds before version 2 read it as before and
// refuse (rather than silently drop) one with arrays.
inline constexpr int kChunkedVersion = 2;
inline constexpr int kChunkedVersionWithoutArrays = 1;

struct ChunkFile {
  std::string file;  // relative to the dataset directory
  int64_t rows = 0;  // >= 0
};

struct ChunkedFeatures {
  DType dtype = DType::kFloat32;  // float32, float16 or bfloat16
  int64_t dim = 0;                // >= 1
  std::vector<ChunkFile> chunks;  // rows in order; they sum to the node (type) count
};

// An optional edge or node array (data/edge_arrays.h) in chunks: "edge_time" int64,
// "edge_weight" float32, "edge_feat" float32/float16/bfloat16 with dim >= 1, "node_time"
// int64. An edge array has one chunk per edge chunk of its edges, of the same rows; a node
// array's chunks cover the node (type) ids in order, cut anywhere.
struct ChunkedArray {
  std::string name;
  DType dtype = DType::kInt64;
  int64_t dim = 0;  // 0: [rows] chunks; d >= 1: [rows, d] (edge_feat)
  std::vector<ChunkFile> chunks;
};

struct ChunkedNodeType {
  std::string name;
  int64_t count = 0;                        // >= 1
  std::optional<ChunkedFeatures> features;  // none: a featureless type
  std::vector<ChunkedArray> node_arrays;    // node_time, or none (all types or none have it)
};

struct ChunkedRelation {
  std::string src_type, name, dst_type;  // edges src_type -> dst_type, type-local ids
  std::vector<ChunkFile> edges;          // int64 [rows, 2] each
  // The same arrays (names, dtypes, dims) for every relation, or none for all.
  std::vector<ChunkedArray> edge_arrays;
};

struct ChunkedManifest {
  int64_t num_nodes = 0;    // homogeneous: N; typed: sum of the type counts (set on read)
  int64_t num_classes = 0;  // labels lie in [-1, num_classes); >= 1
  // Homogeneous.
  std::vector<ChunkFile> edges;             // int64 [rows, 2], original ids
  std::optional<ChunkedFeatures> features;  // required for homogeneous datasets
  // Typed (node_types non-empty): types in id order, input relations, the labelled type.
  std::vector<ChunkedNodeType> node_types;
  std::vector<ChunkedRelation> relations;
  std::string target;
  // Labels (int64 [rows] chunks; -1: unlabelled) of all nodes (typed: of the target type).
  std::vector<ChunkFile> labels;
  // Split files: int64 [n], strictly ascending ids (typed: target-local).
  std::string train_idx = "train_idx.npy", valid_idx = "valid_idx.npy", test_idx = "test_idx.npy";
  // Homogeneous optional arrays, aligned with `edges` chunk for chunk, and with the nodes.
  std::vector<ChunkedArray> edge_arrays, node_arrays;

  bool typed() const { return !node_types.empty(); }
};

// Whether `dir` holds manifest.json.
bool looks_like_chunked_layout(const std::string& dir);

// Parses and checks dir/manifest.json: format and version, counts, row sums (features and
// labels cover every node of their type, at least one edge), names (types known, relations
// unique, files relative without ".."). Opens no chunk file. Throws IoError/FormatError
// whose message starts with the manifest's path.
ChunkedManifest read_chunked_manifest(const std::string& dir);

// Writes dir/manifest.json (through a temp file renamed into place, so a reader never sees
// half of one). Returns the bytes written. Throws IoError naming the path.
int64_t write_chunked_manifest(const std::string& dir, const ChunkedManifest& manifest);

// Balanced, consecutive chunk shares: rank r of `ranks` reads chunk i when the chunk's first
// row (counting all chunks' rows in order) lies in [total*r/ranks, total*(r+1)/ranks).
// Returns [first, last) chunk indices. Every chunk goes to exactly one rank.
std::pair<size_t, size_t> chunk_share(const std::vector<int64_t>& chunk_rows, int rank, int ranks);

}  // namespace partita::data
