#pragma once
// Private to partition/: the link-prediction split of the distributed pipeline
// (dist_partition.h), made and written in shares: the same held-out units, negatives and
// files, byte for byte, as the single-process split (edge_split.h, edge_split_writer.cc)
// on the same graph, seed and assignment, whatever the rank count.
//
// Sampled split: units are numbered in the single-process order (destination, then
// source), so rank r's units follow those of ranks below it; every rank replays the one
// random stream (edge_split_draw.h) and keeps what falls in its range. The replay holds
// units/8 bytes of membership bits and 16 bytes per held-out unit on every rank (no edge
// lists). Negatives by rejection ask, per batch of candidates, each rank about the rows and
// the accepted pairs (a hash share) it holds; on graphs dense enough for enumeration every
// rank gathers an n x n adjacency bitmap (such graphs have at least n^2/6 units).
// Dataset split (train_edges.npy ...): each rank holds its rows of each file; the checks
// of dataset_edge_split run where the pairs meet (row owners, a pair's hash owner).
#include <optional>
#include <string>
#include <vector>

#include "dist_layout.h"
#include "partita/data/shard.h"
#include "partita/partition/dist_partition.h"
#include "partita/partition/format.h"

namespace partita::partition {

// One rank's share of a split, ORIGINAL ids, interleaved (src, dst) pairs.
// Sampled: the units of this rank's rows (train, valid, test; in unit order) and the
// negatives whose draw index k satisfies k mod ranks == rank. Dataset: this rank's rows of
// each file, in file order (ranks in rank order make up each file).
struct ShardHeldOut {
  std::string source;  // "sampled" or "dataset"
  EdgeSplitOptions fractions;
  std::vector<int64_t> train, valid, test, valid_neg, test_neg;
};

// Collective. The split `options.edge_split` or the shard's own files ask for (nullopt:
// none), from the full graph (before removal). Throws on every rank alike: ParameterError
// naming `edge_split` as partition_dataset does (typed dataset, both a flag and files,
// nothing left to train on, too few non-edges), FormatError naming the file for a
// dataset split that dataset_edge_split refuses.
std::optional<ShardHeldOut> shard_edge_split(const data::DatasetShard& shard,
                                             const ShardGraph& graph,
                                             const PartitionOptions& options, DistComm& comm);

// Collective: drops every valid and test pair from `graph` in both directions, as
// remove_held_out does, and updates num_edges_total.
void remove_held_out_shard(ShardGraph& graph, const ShardHeldOut& held, DistComm& comm);

// Collective: writes edges/*.npy and part<p>/train_edges.npy exactly as write_edge_split
// does, given the distributed renumbering. Appends the files this rank finished to
// `files`; returns the figures (the same on every rank). Throws (agreed) IoError.
EdgeSplitStats write_edge_split_distributed(const ShardHeldOut& held, const DistLayout& layout,
                                            int64_t node_begin, const std::string& out_dir,
                                            DistComm& comm, int threads,
                                            std::vector<FileEntry>* files);

}  // namespace partita::partition
