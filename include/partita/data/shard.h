#pragma once
// One rank's share of a dataset too large for one host: what `partita partition` reads under
// mpirun (docs/dataset-format.md, "Reading in shares"). No rank ever holds the whole graph
// or the whole feature matrix: a rank reads a slice of the listed edges and the rows of its
// own node block, and streams feature rows on demand.
//
// Node blocks: with R ranks, rank r owns the original ids [n*r/R, n*(r+1)/R) (node_block()).
// Edge shares: every listed edge is read by exactly one rank (a row range of edges.npy, or a
// set of chunk files of the chunked layout); which rank reads an edge says nothing about
// its endpoints.
//
// Layouts: the Partita numpy layout (homogeneous, and the hetero.json typed one) read by row
// ranges of the mapped arrays, and the chunked layout (manifest.json + numbered chunk files).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "partita/core/npy.h"
#include "partita/data/dataset.h"
#include "partita/data/edge_arrays.h"

namespace partita::data {

// [first, second): the original ids rank `rank` of `ranks` owns among `num_nodes` nodes.
inline std::pair<int64_t, int64_t> node_block(int64_t num_nodes, int rank, int ranks) {
  return {num_nodes * rank / ranks, num_nodes * (rank + 1) / ranks};
}

// Streams feature rows: copies rows [begin, end) of the whole matrix (original ids; for
// typed datasets, rows of one node type in type-local ids) into `out`, row-major, in the
// stored dtype. Thread-safe. Throws IoError/FormatError naming the file on a short read.
using FeatureRowReader = std::function<void(int64_t begin, int64_t end, void* out)>;

struct ShardFeatures {
  int64_t dim = 0;  // 0: no features (a featureless node type)
  DType dtype = DType::kFloat32;
  FeatureRowReader read;
};

struct DatasetShard {
  std::string path;    // dataset directory
  std::string layout;  // "numpy" or "chunked"
  int rank = 0, ranks = 1;
  int64_t num_nodes = 0;
  int64_t num_classes = 0;
  int64_t node_begin = 0, node_end = 0;  // node_block(num_nodes, rank, ranks)

  // This rank's share of the listed edges, original ids, each checked in [0, num_nodes).
  // Typed datasets: edge_relation[i] is the input relation of edge i (no reverse relations
  // yet: the graph builder adds them).
  std::vector<int64_t> src, dst;
  std::vector<int32_t> edge_relation;
  int64_t input_edges_total = 0;  // listed edges over all ranks (from the metadata)
  // Numpy layouts with edge arrays (data/edge_arrays.h): one row per edge of src/dst, and the
  // listing position of src[0] (the share is a contiguous range of the listing; typed: of the
  // relations' edges one after another).
  std::vector<ExtraArray> edge_arrays;
  int64_t first_edge = 0;

  // Labels of the owned block ([node_end - node_begin], -1: unlabelled) and the split ids
  // that fall in it (original ids, ascending).
  std::vector<int64_t> labels;
  std::vector<int64_t> train_idx, valid_idx, test_idx;
  // node_time.npy (data/edge_arrays.h): one row per block node.
  std::vector<ExtraArray> node_arrays;

  // Homogeneous: features of all nodes, rows = original ids.
  ShardFeatures features;
  // Typed datasets only: the schema (node types with counts and offsets, input relations;
  // NodeType::features left empty) and one reader per node type, in type order.
  std::optional<HeteroSchema> hetero;
  std::vector<ShardFeatures> type_features;

  // Numpy layout with train_edges.npy etc.: the dataset's own link-prediction split, this
  // rank's share of each array's pairs (interleaved src, dst as EdgeSplitArrays).
  std::optional<EdgeSplitArrays> edge_split;
};

// Reads rank `rank` of `ranks`'s share of `dir` (numpy or chunked layout, detected). Every
// rank checks the metadata and the shapes of every file; each rank checks the values it
// reads (ids in range, labels in [-1, classes), splits ascending). Problems throw
// IoError/FormatError whose message starts with the offending path; the caller agrees on
// errors across ranks. OGB's csv.gz layout is not read in shares (FormatError telling the
// user to convert it).
DatasetShard read_dataset_shard(const std::string& dir, int rank, int ranks);

}  // namespace partita::data
