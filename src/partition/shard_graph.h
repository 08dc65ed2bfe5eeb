#pragma once
// Private to partition/: stage 1's row builder (shard_graph.cc), which assign.cc shares.
#include <cstdint>
#include <vector>

#include "partita/graph/csr.h"

namespace partita::partition {

// The CSR of rows [node_begin, node_begin + rows) from received entries of two uint64 words
// (key, global row), each row's keys (as int64) sorted and deduplicated whatever the arrival
// order or thread count. Frees `recv` once read. Error when an entry's row is outside the
// block (this is rank `rank`).
graph::Csr rows_of_entries(std::vector<std::vector<uint8_t>> recv, int64_t node_begin, int64_t rows,
                           int rank, int threads);

}  // namespace partita::partition
