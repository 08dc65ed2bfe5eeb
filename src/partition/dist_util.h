#pragma once
// Small helpers the distributed partition stages share (dist_partition.h).
#include <cstdint>
#include <vector>

#include "partita/data/shard.h"

namespace partita::partition {

// The rank whose node block (data::node_block) holds a node id.
class BlockOwner {
 public:
  BlockOwner(int64_t num_nodes, int ranks) : begin_(static_cast<size_t>(ranks) + 1) {
    for (int r = 0; r <= ranks; ++r) begin_[r] = data::node_block(num_nodes, r, ranks).first;
    begin_[ranks] = num_nodes;
    num_nodes_ = num_nodes;
    ranks_ = ranks;
  }
  // v in [0, num_nodes).
  int operator()(int64_t v) const {
    // Blocks are n*r/R: the guess v*R/n is at most one block off.
    int r = num_nodes_ > 0 ? static_cast<int>(static_cast<__int128>(v) * ranks_ / num_nodes_) : 0;
    if (r >= ranks_) r = ranks_ - 1;
    while (r > 0 && v < begin_[r]) --r;
    while (r + 1 < ranks_ && v >= begin_[r + 1]) ++r;
    return r;
  }
  int64_t begin(int rank) const { return begin_[rank]; }

 private:
  std::vector<int64_t> begin_;
  int64_t num_nodes_ = 0;
  int ranks_ = 1;
};

}  // namespace partita::partition
