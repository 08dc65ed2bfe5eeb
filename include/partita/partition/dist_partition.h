#pragma once
// Partitioning across ranks, for graphs no host can hold (`partita partition` under
// mpirun). Three stages, each rank holding only its share:
//   1. build_shard_graph: the listed edges (data::DatasetShard, any rank) go to the owner
//      of their destination's node block, where they become the in-edge CSC of the block
//      (duplicates and self loops dropped, reverse edges/relations added as asked);
//   2. assign_parts_distributed: a part for every node of the block (the coarse partitioner,
//      PT-Scotch through DistComm::part_graph, or seeded random), balanced as asked;
//   3. write_partition_distributed: contiguous renumbering across ranks, then nodes,
//      in-edges, features (in bounded chunks), labels and splits move to the rank that
//      writes their part, which writes the same partition directory as partition_dataset
//      (docs/partition-format.md). Part p is written by rank p % ranks.
// A link-prediction split (options.edge_split, or the dataset's own train_edges.npy ...) is
// made by run_partition_distributed between stages 1 and 2, its held-out pairs removed
// before assignment, and its files written in stage 3: the same as partition_dataset's for
// the same assignment, whatever the rank count (src/partition/dist_edge_split.h).
// Same inputs, options, seed and rank count give byte-identical arrays and a partita.json
// differing only in timing and peak-memory fields.
#include <cstdint>
#include <vector>

#include "partita/data/shard.h"
#include "partita/graph/csr.h"
#include "partita/partition/dist_comm.h"
#include "partita/partition/partition.h"

namespace partita::partition {

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
};

// Stage 1. `undirected` adds the reverse of every edge (homogeneous); typed shards get the
// reverse relations unless reverse_relations is false. Consumes shard.src/dst.
ShardGraph build_shard_graph(data::DatasetShard& shard, bool undirected, bool reverse_relations,
                             DistComm& comm, int threads);

// Stage 2. The part of every node of the block ([node_end - node_begin]). Random: node v
// gets label v mod P, shuffled inside each block (seed, rank, ranks): part sizes exactly as
// single-process random, deterministic for a given rank count. METIS: on
// distributed_adjacency, options.dist_partitioner picks the coarse partitioner
// (src/partition/coarse_partition.h: every asked constraint weighed) or PT-Scotch through
// DistComm::part_graph (node counts only); then a deterministic rebalancing pass moves nodes
// out of parts above 1.05 in any constraint (src/partition/rebalance.h); parts left empty
// get a node from the largest. ParameterError for num_parts outside [1, nodes].
std::vector<int32_t> assign_parts_distributed(const ShardGraph& graph,
                                              const data::DatasetShard& shard,
                                              const PartitionOptions& options, DistComm& comm);

// Stage 2's input to DistComm::part_graph: vtxdist from the node blocks, row v = in(v) ∪
// out(v) (sorted, unique, without v; out-neighbours fetched from the sources' owners unless
// graph.symmetric), unit vertex weights (vwgt empty). Collective.
DistAdjacency distributed_adjacency(const ShardGraph& graph, DistComm& comm, int threads);

// Stored in-edges whose endpoints lie in different parts, over all ranks (the summary's
// edge_cut), given every rank's `part` of its block. Collective.
int64_t distributed_edge_cut(const ShardGraph& graph, const std::vector<int32_t>& part,
                             DistComm& comm);

// Stage 3. Writes options.out_dir and returns the summary stored in partita.json (on every
// rank; peak_rss_bytes is the maximum over ranks, per-rank peaks in rank_peak_rss_bytes).
// ParameterError naming `edge_split` when the options or the shard ask for a link-prediction
// split: only run_partition_distributed makes one.
PartitionSummary write_partition_distributed(const data::DatasetShard& shard,
                                             const ShardGraph& graph,
                                             const std::vector<int32_t>& part,
                                             const PartitionOptions& options, DistComm& comm);

// The whole pipeline on rank comm.rank(): read_dataset_shard, stages 1-3, with progress
// through log_info on rank 0 and phase times in the summary.
PartitionSummary run_partition_distributed(const std::string& dataset_dir,
                                           const data::LoadOptions& load,
                                           const PartitionOptions& options, DistComm& comm);

}  // namespace partita::partition
