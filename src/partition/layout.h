#pragma once
// Private to partition/: where things are across ranks. BlockOwner: the rank whose node
// block holds an original id. PartLayout: the contiguous renumbering (DESIGN decision 1)
// computed across ranks, and where every rank's nodes, edges and rows land in each part's
// files.
//
// Rank r holds the original ids [node_begin, node_end) (data::node_block), a part for each.
// Part p owns new ids [ranges[p], ranges[p+1]) and lists its nodes in original-id order; node
// blocks increase with the rank, so inside part p rank r's nodes come after those of ranks
// below r: they start at the position of the part those ranks' nodes fill, their in-edges at
// rank r's edge_offset(p). So inside each part new ids increase with original ids, and no
// rank holds more than its block.
#include <cstdint>
#include <vector>

#include "collective.h"
#include "partita/data/hetero.h"
#include "partita/graph/csr.h"
#include "partita/partition/dist_comm.h"

namespace partita::partition {

// The rank whose node block (data::node_block) holds a node id.
class BlockOwner {
 public:
  BlockOwner(int64_t num_nodes, int ranks);
  // v in [0, num_nodes).
  int operator()(int64_t v) const;

 private:
  std::vector<int64_t> begin_;  // ranks + 1
  int64_t num_nodes_ = 0;
  int ranks_ = 1;
};

class PartLayout {
 public:
  // Collective: every rank passes its block's parts, in-edge degrees and split ids (train,
  // valid, test: original ids of the block). `schema` (typed graphs, else nullptr) gives each
  // node's type for the type starts.
  PartLayout(int64_t node_begin, const std::vector<int32_t>& part, const graph::Csr& in_edges,
             const std::vector<int64_t>* const (&splits)[3], int num_parts,
             const data::HeteroSchema* schema, DistComm& comm);

  int num_parts() const { return num_parts_; }
  int64_t node_begin() const { return node_begin_; }  // this rank's first original id
  int writer(int p) const { return p % ranks_; }      // the rank writing part p
  const std::vector<int64_t>& ranges() const { return ranges_; }
  int64_t part_nodes(int p) const { return ranges_[p + 1] - ranges_[p]; }
  int64_t part_edges(int p) const { return counts_.total[p * stride_ + 1]; }
  // Where this rank's in-edges start in part p's indices.
  int64_t edge_offset(int p) const { return counts_.first[p * stride_ + 1]; }
  // Split k's (train, valid, test) ids in part p, and where this rank's start among them.
  int64_t part_split(int p, int k) const { return counts_.total[p * stride_ + 2 + k]; }
  int64_t split_offset(int p, int k) const { return counts_.first[p * stride_ + 2 + k]; }
  // Typed: new ids of type t in part p are [type_starts[p][t], type_starts[p][t+1]).
  const std::vector<std::vector<int64_t>>& type_starts() const { return type_starts_; }
  // The part owning new id `gid`.
  int owner_part(int64_t gid) const;
  // New id of block node i (original id node_begin + i).
  const std::vector<int64_t>& block_new_id() const { return block_new_id_; }

 private:
  int ranks_ = 1, num_parts_ = 1;
  int64_t node_begin_ = 0;
  std::vector<int64_t> ranges_;
  size_t stride_ = 5;   // per part: nodes, edges, the three splits, each type's nodes
  RankOffsets counts_;  // over ranks: those counts' sums, and this rank's offsets
  std::vector<std::vector<int64_t>> type_starts_;
  std::vector<int64_t> block_new_id_;
};

// Collective: the `count` original ids at `ids` (sources of in-edges, say) mapped to new ids:
// those of this rank's block looked up here, the others asked of the rank whose block holds
// them. Every rank calls it once per round, with count 0 when it has nothing left. An id
// outside [0, num_nodes) fails `failure` with an Error after the exchange, so peers are not
// left waiting (the values returned then do not matter). Uses up to `threads` threads.
std::vector<int64_t> map_sources(const int64_t* ids, int64_t count, const PartLayout& layout,
                                 DistComm& comm, int threads, RankFailure& failure);

}  // namespace partita::partition
