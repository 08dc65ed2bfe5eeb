#pragma once
// Steps the share readers of each layout have in common (shard_reader.cc,
// shard_chunked.cc). Private to data/.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/data/shard.h"

namespace partita::data {

// Sets rank, ranks, num_nodes and the node block of `s`.
void set_block(DatasetShard& s, int64_t num_nodes, int rank, int ranks);

// The ids of sorted `sorted_ids` that lie in [begin, end).
std::vector<int64_t> ids_in_block(const std::vector<int64_t>& sorted_ids, int64_t begin,
                                  int64_t end);

// The chunked layout's reader (shard_chunked.cc); `dir` holds manifest.json.
DatasetShard read_chunked_shard(const std::string& dir, int rank, int ranks);

}  // namespace partita::data
