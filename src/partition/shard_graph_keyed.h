#pragma once
// Private to partition/: stage 1 on several ranks when the edges carry arrays (shard_graph.cc
// for the plain case), and the plain case's row builder, which assign.cc shares.
#include "partita/partition/pipeline.h"

namespace partita::partition {

// The CSR of rows [node_begin, node_begin + rows) from received entries of two uint64 words
// (key, global row), each row's keys (as int64) sorted and deduplicated whatever the arrival
// order or thread count. Frees `recv` once read. Error when an entry's row is outside the
// block (this is rank `rank`).
graph::Csr rows_of_entries(std::vector<std::vector<uint8_t>> recv, int64_t node_begin, int64_t rows,
                           int rank, int threads);

// Sends every edge of shard.src/dst (and, when `reverse`, its reverse; self loops skipped)
// with its listing position and its rows of shard.edge_arrays to the owner of its row, and
// builds the rows of this rank's block in data/edge_arrays.h's order: g.in_edges (the keys:
// sources, typed relation << 47 | source) and one g.edge_columns entry per array, each row of the
// same listed edge in the same slot whatever the rank count. Consumes shard.src/dst,
// edge_relation and edge_arrays. Collective.
void build_keyed_rows(data::DatasetShard& shard, bool typed, bool reverse, int input_relations,
                      DistComm& comm, int threads, ShardGraph& g);

}  // namespace partita::partition
