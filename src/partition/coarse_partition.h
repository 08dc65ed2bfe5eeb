#pragma once
// Private to partition/: a light parallel multilevel partitioner (the default for method
// metis on several ranks; PT-Scotch stays selectable, pipeline.h).
//
//   1. Coarsen: each rank clusters its own vertices by size-constrained label propagation
//      over the edges inside its block (levels of a few rounds, vertices in id order, ties
//      to the lowest cluster id; vertices left alone grouped in id order), until its block
//      has at most its share of 2000 P clusters or a level stops shrinking. Cluster weights
//      carry every constraint; no cluster exceeds 1.5x the average coarse vertex in any.
//   2. Partition: the coarse graph (cluster weights, aggregated edge weights, cross-rank
//      edges mapped through their owners' cluster ids; only edges of weight >= t, t the
//      smallest threshold leaving <= 256 entries per coarse vertex) goes to rank 0, which
//      runs METIS (every constraint, imbalance 1.03, the seed) and sends back the parts.
//   3. Refine: rounds of boundary label propagation on the fine graph: a node moves to the
//      neighbouring part holding most of its neighbours when that beats its own part and
//      the move keeps every constraint of the target within `limit` of the mean (each rank
//      fills at most 1/ranks of a part's room per round; even rounds move only to higher
//      part ids, odd rounds to lower ones, so neighbours on two ranks never swap blindly).
// Single-threaded per rank, so the result depends only on the graph, weights, num_parts,
// seed and rank count. Collective.
#include <cstdint>
#include <vector>

#include "partita/partition/dist_comm.h"

namespace partita::partition {

struct CoarseStats {
  int levels = 0;               // coarsening levels (max over ranks)
  int64_t coarse_vertices = 0;  // vertices of the gathered graph
  int64_t coarse_edges = 0;     // its adjacency entries (both directions)
  int64_t refine_moves = 0;     // node moves of the refinement, over all ranks
  int refine_rounds = 0;
};

struct CoarseOptions {
  int num_parts = 2;
  double limit = 1.04;  // the refinement's bound on max/mean load, every constraint
  uint64_t seed = 0;    // METIS's on the coarse graph
};

// graph: the undirected adjacency (DistAdjacency; vwgt ignored; freed once copied). weight[c][v]:
// weight of local vertex v in constraint c (weight[0] usually all ones), every constraint's total >
// 0. Returns the part of each local vertex and fills `stats` (the same on every rank). Error when
// the coarse graph cannot be gathered (over 2^31 - 1 vertices or entries: METIS's 32-bit idx_t).
std::vector<int32_t> coarse_partition(DistAdjacency graph,
                                      const std::vector<std::vector<int64_t>>& weight,
                                      const CoarseOptions& options, DistComm& comm,
                                      CoarseStats& stats);

}  // namespace partita::partition
