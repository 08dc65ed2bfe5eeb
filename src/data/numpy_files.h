#pragma once
// Which files of a directory make up a Partita numpy-layout dataset (docs/dataset-format.md):
// the canonical names and the ones PyG and DGL users save under (edge_index.npy, x.npy,
// y.npy, *_mask.npy, val_idx.npy), and the readers of the split files in both forms.
// Private to data/.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/npy.h"
#include "partita/data/edge_arrays.h"
#include "partita/data/hetero.h"

namespace partita::data {

// One split: a list of node ids (int64 [n]) or a node mask (bool or uint8 [N], 0/1).
struct NumpySplitFile {
  std::string name;  // "train", "valid", "test": for messages
  std::string path;
  bool mask = false;
};

struct NumpyLayoutFiles {
  std::string feat;   // feat.npy or x.npy
  std::string label;  // label.npy or y.npy
  std::string edges;  // edges.npy [E, 2] or edge_index.npy [2, E]
  bool edge_index = false;
  NumpySplitFile splits[3];  // train, valid, test
};

// Chooses the files of `dir`. Throws IoError "<dir>: missing feat.npy (or x.npy), ... (the
// numpy layout: docs/dataset-format.md)" listing every required file that has no accepted
// name present, and FormatError "<dir>: both A and B are present; ..." when two names of one
// file are.
NumpyLayoutFiles find_numpy_files(const std::string& dir);

// True when `dir` holds one of the names that mark the numpy layout (edges.npy,
// edge_index.npy, feat.npy or x.npy).
bool looks_like_numpy_layout(const std::string& dir);

// The numpy layout's files as both of its readers check them before reading values (one
// process: read_numpy_dataset; shares: read_dataset_shard): feat.npy float32 [N > 0, d > 0],
// label.npy int64 [N], the splits read whole (validated, sorted), the edge file int64 or
// int32 [E, 2] (edge_index.npy: [2, E]) with E > 0. FormatError naming the file.
// An optional array file beside the graph (data/edge_arrays.h), its shape checked.
struct ArrayFile {
  std::string name;  // kEdgeTimeName, ...
  std::string path;
  DType dtype = DType::kInt64;
  int64_t dim = 0;   // 0: [rows]; d: [rows, d]
  int64_t rows = 0;  // rows of the file
};

struct NumpyLayout {
  NumpyLayoutFiles files;
  // Present ones only: edge_time, edge_weight, edge_feat ([E] / [E, d]); node_time ([N]).
  std::vector<ArrayFile> edge_arrays, node_arrays;
  int64_t num_nodes = 0, feat_dim = 0, num_edges = 0;
  std::vector<int64_t> splits[3];  // train, valid, test
  bool columns = false;            // edges stored as all sources, then all destinations
};
NumpyLayout check_numpy_layout(const std::string& dir);

// The optional arrays of `dir` (data/edge_arrays.h) checked against the counts: edge_time.npy
// int64 [E], edge_weight.npy float32 [E], edge_feat.npy float32/float16/bfloat16 [E, d > 0]
// in C order (E rows of `edges`), node_time.npy int64 [N] (N rows of `feat`). FormatError
// naming the file for a wrong dtype, rank or length.
void find_array_files(const std::string& dir, const std::string& edges, int64_t num_edges,
                      const std::string& feat, int64_t num_nodes, std::vector<ArrayFile>& edge,
                      std::vector<ArrayFile>& node);

// Rows [begin, end) of `file`, every value checked: weights finite and > 0, features finite
// (FormatError "<file>: entry i is v; ..." / "row r column c: value v is not finite").
ExtraArray read_array_rows(const ArrayFile& file, int64_t begin, int64_t end);

// The value checks of read_array_rows on array `a` (an edge_weight's or edge_feat's; others
// pass), whose row 0 is row `first` of `source`; messages count rows "entry i" / "row i", or
// with `lines` (a CSV) "line i+1".
void check_array_values(const ExtraArray& a, const std::string& source, int64_t first, bool lines);

// A chunk file of array `name` (the chunked layout): `dtype`, `rows` rows, `dim` columns (0: a
// vector), C order; FormatError naming the file otherwise.
ArrayFile check_chunk_file(const std::string& path, const std::string& name, DType dtype,
                           int64_t dim, int64_t rows);

// Rows [begin, end) of the files of one array laid end to end (a typed layout's files, one per
// relation or node type, in schema order), each file's rows checked as read_array_rows does.
// `files` share name, dtype and dim.
ExtraArray read_joined_rows(const std::vector<ArrayFile>& files, int64_t begin, int64_t end);

// The numpy heterogeneous layout's files besides hetero.json, as both of its readers check
// them before reading (one process: read_numpy_hetero_dataset; shares: read_dataset_shard):
// label.npy int64 [target count]; {train,valid,test}_idx.npy, read whole (ids of the target
// type, validated, sorted, homogenised); edges/<triplet>.npy int64 [E, 2] per relation, at
// least one edge in all; feat/<type>.npy float32 [type count, d > 0] per type that has one,
// feat/ holding nothing else. FormatError naming the file.
struct NumpyHeteroLayout {
  std::string label;
  std::vector<int64_t> splits[3];     // train, valid, test
  std::vector<std::string> edges;     // per relation, in schema order
  std::vector<int64_t> edge_counts;   // rows of each edge file
  std::vector<std::string> features;  // per node type; "" when it has none
  // Present arrays only (find_typed_array_files): per array, one file per relation
  // (edge_time/<triplet>.npy ...) or per node type (node_time/<type>.npy), in schema order.
  std::vector<std::vector<ArrayFile>> edge_arrays, node_arrays;
};
NumpyHeteroLayout check_numpy_hetero_layout(const std::string& dir, const HeteroSchema& schema);

// The typed layout's optional arrays (docs/dataset-format.md): a folder edge_time/,
// edge_weight/ or edge_feat/ holds <triplet>.npy for every relation of `schema` (rows: that
// relation's edge file's, files.edge_counts), node_time/ holds <type>.npy for every node type
// (rows: the type's count); dtypes and shapes as find_array_files checks them, edge_feat one
// dtype and width for all relations. Sets files.edge_arrays and files.node_arrays. FormatError
// naming the file (and the relation or type) for a missing or stray file, a wrong dtype,
// shape or length, and for a homogeneous array file (edge_time.npy ...) beside hetero.json.
void find_typed_array_files(const std::string& dir, const HeteroSchema& schema,
                            NumpyHeteroLayout& files);

// The split's node ids, validated (in [0, num_nodes), unique) and sorted. A mask must have
// num_nodes entries, each 0 or 1 (FormatError naming the file and `feat` otherwise).
std::vector<int64_t> read_numpy_split(const NumpySplitFile& file, int64_t num_nodes,
                                      const std::string& feat);

}  // namespace partita::data
