#pragma once
// Private to partition/: stage 1 on several ranks when the edges carry arrays (shard_graph.cc
// for the plain case), the entries of a listed edge both cases pack, and the plain case's row
// builder, which assign.cc shares.
#include "layout.h"
#include "partita/partition/pipeline.h"

namespace partita::partition {

constexpr int kRelationShift = 47;  // typed keys: relation << 47 | source

// Calls emit(rank, key, row, reversed) for the entries of listed edge i of `shard` (none for
// a self loop): (key, dst) for dst's owner and, when `reverse`, (key', src) for src's. key is
// the source (typed: relation << 47 | source; key' names the relation's reverse, relation +
// the input's relation count).
template <class F>
void edge_entries(const data::DatasetShard& shard, int64_t i, bool reverse, const BlockOwner& owner,
                  F&& emit) {
  const int64_t s = shard.src[i], d = shard.dst[i];
  if (s == d) return;
  const uint64_t rel = shard.hetero ? static_cast<uint64_t>(shard.edge_relation[i]) : 0;
  emit(owner(d), (rel << kRelationShift) | static_cast<uint64_t>(s), d, false);
  if (!reverse) return;
  const uint64_t rev = shard.hetero ? rel + shard.hetero->relations.size() : 0;
  emit(owner(s), (rev << kRelationShift) | static_cast<uint64_t>(d), s, true);
}

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
void build_keyed_rows(data::DatasetShard& shard, bool reverse, DistComm& comm, int threads,
                      ShardGraph& g);

}  // namespace partita::partition
