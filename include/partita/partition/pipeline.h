#pragma once
// The stages of the partition pipeline (run_partition, partition.h), over a communicator
// (dist_comm.h). One process is the one-rank case (OneRankComm); under mpirun every rank
// runs every stage on its share, and no rank holds the whole graph:
//   read    a PartitionInput: this rank's node block with its labels, split ids and feature
//           readers (data::DatasetShard), and the in-edges of the block (ShardGraph). One
//           rank: a loaded data::Dataset (any layout, dataset_input); several: their shares
//           of the dataset (data::read_dataset_shard), the edges sent to the owner of their
//           destination's block (build_shard_graph).
//   split   (link prediction only) held-out pairs chosen and removed from the graph
//           (edge_split.h); written with the parts.
//   assign  a part for every node of the block (assign_parts: one interface, a strategy each).
//   write   contiguous renumbering across ranks, then nodes, in-edges, features (in bounded
//           rounds), labels and splits move to the rank writing their part (p % ranks),
//           which writes the partition directory (docs/partition-format.md).
// The writer's bytes depend on the assignment only, not on the rank count; with the same
// inputs, options, seed and rank count, the whole run gives byte-identical arrays and a
// partita.json differing only in timing and peak-memory fields.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "partita/data/dataset.h"
#include "partita/data/shard.h"
#include "partita/graph/csr.h"
#include "partita/partition/dist_comm.h"
#include "partita/partition/partition.h"

namespace partita::partition {

using Phases = std::vector<std::pair<std::string, double>>;

// An array the writer carries into every part as part<p>/<name>.npy, beside the in-edges:
// `values` holds dtype_size(dtype) bytes for each block node (PartitionInput::node_columns,
// in block order) or each stored entry (ShardGraph::edge_columns, in the order of
// in_edges.indices), and each part's file lists them in the order of its nodes or entries.
struct Column {
  std::string name;  // the file's name without .npy; not one the format already uses
  DType dtype = DType::kInt64;
  std::vector<uint8_t> values;
};

// The in-edges of one rank's node block.
struct ShardGraph {
  int64_t num_nodes = 0;                 // whole graph
  int64_t node_begin = 0, node_end = 0;  // the block (data::node_block)
  // Rows: block nodes (local row v - node_begin); indices: ORIGINAL global source ids,
  // each row sorted ascending (typed: by (relation, source)), unique, without self loops.
  graph::Csr in_edges;
  std::vector<int32_t> edge_relation;  // typed: relation of each entry (reverse ones added)
  int64_t num_edges_total = 0;         // entries over all ranks
  // Every edge's reverse is stored too (reverse edges or relations were added): the union
  // of a row's sources is then the node's whole undirected neighbourhood.
  bool symmetric = false;
  // Per-entry arrays, written after indices.npy (and etype.npy); kept in step with the
  // entries when held-out pairs leave the graph.
  std::vector<Column> edge_columns;
};

// What every later stage reads on one rank. shard.hetero (typed datasets) lists the
// relations of the graph as stored: the input's, then their reverses when they were added.
struct PartitionInput {
  data::DatasetShard shard;
  ShardGraph graph;
  std::vector<Column> node_columns;  // per block node, written after label.npy
};

// A loaded dataset as the one rank's input (block = every node). The first form copies the
// arrays and reads the features of `dataset`, which must outlive the input; the second takes
// them all. Throws Error when the dataset breaks data/dataset.h's shape contract (graph rows,
// feature rows, labels, relations per entry).
PartitionInput dataset_input(const data::Dataset& dataset);
PartitionInput dataset_input(data::Dataset&& dataset);

// Stage 1 on several ranks. `undirected` adds the reverse of every edge (homogeneous); typed
// shards get the reverse relations unless reverse_relations is false (appended to
// shard.hetero's relations). Consumes shard.src/dst.
ShardGraph build_shard_graph(data::DatasetShard& shard, bool undirected, bool reverse_relations,
                             DistComm& comm, int threads);

// The assignment strategies. Method random: one rank shuffles the labels of the whole
// graph (assign_random, assign.h); several shuffle inside each block (node v gets label
// v mod P, shuffled with a stream of (seed, rank, ranks): part sizes exactly as on one rank,
// deterministic for a given rank count). Method metis: one rank runs METIS on the whole graph
// (assign_metis); several run options.dist_partitioner: the coarse partitioner
// (src/partition/coarse_partition.h: every asked constraint weighed) or PT-Scotch through
// DistComm::part_graph (node counts only). Across ranks a deterministic rebalancing pass then
// moves nodes out of parts above 1.05 in any constraint (src/partition/rebalance.h); parts
// left empty get a node from the largest.
enum class AssignStrategy { kMetis, kCoarse, kPtScotch, kRandom };

// What the options pick on `ranks` ranks (above).
AssignStrategy assign_strategy(const PartitionOptions& options, int ranks);

struct AssignInput {
  const ShardGraph& graph;
  const std::vector<int64_t>& train_idx;  // the block's training nodes (balance_train)
  const PartitionOptions& options;        // num_parts, method, balance_*, seed, threads
  DistComm& comm;
  std::optional<AssignStrategy> strategy = std::nullopt;  // nullopt: assign_strategy
  // `graph` itself, when the caller lets whole-graph METIS free its indices while METIS's
  // adjacency holds the same rows (symmetric graphs): restored before assign_parts returns.
  ShardGraph* reclaimable = nullptr;
};

struct Assignment {
  std::vector<int32_t> part;  // the part of each block node
  Phases phases;              // METIS: "symmetrize", "metis"; else "assign"
};

// Stage 2, collective. ParameterError for num_parts outside [1, nodes].
Assignment assign_parts(const AssignInput& input);

// Stage 2's input to DistComm::part_graph: vtxdist from the node blocks, row v = in(v) ∪
// out(v) (sorted, unique, without v; out-neighbours fetched from the sources' owners unless
// graph.symmetric), unit vertex weights (vwgt empty). Collective.
DistAdjacency distributed_adjacency(const ShardGraph& graph, DistComm& comm, int threads);

// Stored in-edges whose endpoints lie in different parts, over all ranks (the summary's
// edge_cut), given every rank's `part` of its block. Collective.
int64_t distributed_edge_cut(const ShardGraph& graph, const std::vector<int32_t>& part,
                             DistComm& comm);

// Stage 3, collective: writes options.out_dir and returns the summary stored in
// partita.json (on every rank; on several ranks peak_rss_bytes is the maximum over ranks,
// per-rank peaks in rank_peak_rss_bytes). ParameterError naming `part` for an assignment
// outside [0, num_parts), `edge_split` when the options or the input ask for a
// link-prediction split (run_partition makes it before assignment).
PartitionSummary write_partition(const PartitionInput& input, const std::vector<int32_t>& part,
                                 const PartitionOptions& options, DistComm& comm);

}  // namespace partita::partition
