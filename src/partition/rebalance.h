#pragma once
// Private to partition/: repairs of an assignment across ranks. Empty parts: each gets a node
// from the largest part. Balance for constraints the distributed partitioner does not weigh
// (PT-Scotch balances one vertex weight: the node count). After part_graph, nodes move out of parts
// overloaded in any constraint to the parts with most room, until every constraint's max/mean <=
// limit.
//
// Each round: global loads per (constraint, part); a part above aim = 1 + 0.8 (limit - 1)
// times the mean sheds its excess, each rank its share (by its share of the part's load),
// scanning its nodes in id order and moving a node that carries the overloaded constraint's
// weight to the part with the most relative room that takes it in EVERY constraint (each
// rank may fill 1/ranks of a part's room, so ranks never overfill a part together).
// Deterministic for a given input and rank count. Moves ignore the cut (not boundary-aware):
// they cost cut in proportion to the nodes moved (stats.moved).
#include <cstdint>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/partition/assign.h"
#include "partita/partition/dist_comm.h"

namespace partita::partition {

// The constraints balanced, one weight per node of the block (whose first node is
// `node_begin`; `in_degree_indptr`: its rows' in-edge offsets, [rows + 1]): node count
// (always), training nodes (options.balance_train), in-degree (balance_edges). One of zero
// total weight over all ranks is dropped with a warning (rank 0): nothing to balance.
// Collective.
std::vector<std::vector<int64_t>> constraint_weights(ArrayView<const int64_t> in_degree_indptr,
                                                     int64_t node_begin,
                                                     ArrayView<const int64_t> train_idx,
                                                     const MetisAssignOptions& options,
                                                     DistComm& comm);

// This rank's load of every (constraint c, part p) of `part`, at c * P + p.
std::vector<int64_t> local_loads(const std::vector<std::vector<int64_t>>& weight,
                                 const std::vector<int32_t>& part, size_t P);

struct RebalanceOptions {
  int num_parts = 2;
  double limit = 1.05;  // max/mean every constraint is brought to
  int max_rounds = 100;
};

struct RebalanceStats {
  int rounds = 0;                 // rounds that moved nodes
  int64_t moved = 0;              // node moves over all ranks
  std::vector<double> imbalance;  // per constraint, after the pass (max/mean)
};

// weight[c][v]: weight of local node v in constraint c (all >= 0). Collective.
RebalanceStats rebalance_parts(const std::vector<std::vector<int64_t>>& weight,
                               std::vector<int32_t>& part, const RebalanceOptions& options,
                               DistComm& comm);

// Each empty part, in increasing order, takes the highest-numbered node of the currently
// largest part (lowest part id on ties), so every part owns a node (num_parts <= nodes makes
// it possible). `part` holds the parts of this rank's block, whose first node is
// `node_begin`. Returns the number of parts filled. Collective.
int fill_empty_parts(int64_t node_begin, std::vector<int32_t>& part, int num_parts, DistComm& comm);

}  // namespace partita::partition
