#pragma once
// Private to partition/: stage 1 on several ranks when the edges carry arrays (shard_graph.cc
// for the plain case).
#include "partita/partition/pipeline.h"

namespace partita::partition {

// Sends every edge of shard.src/dst (and, when `reverse`, its reverse; self loops skipped)
// with its listing position and its rows of shard.edge_arrays to the owner of its row, and
// builds the rows of this rank's block in data/edge_arrays.h's order: g.in_edges (original
// sources), g.edge_relation (typed) and one g.edge_columns entry per array, each row of the
// same listed edge in the same slot whatever the rank count. Consumes shard.src/dst,
// edge_relation and edge_arrays. Collective.
void build_keyed_rows(data::DatasetShard& shard, bool typed, bool reverse, int input_relations,
                      DistComm& comm, int threads, ShardGraph& g);

}  // namespace partita::partition
