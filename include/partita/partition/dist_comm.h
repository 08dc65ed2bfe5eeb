#pragma once
// The messaging the distributed partition pipeline needs (partition/dist_partition.h).
// partition/ sits below comm/ and runtime/, so it names only this interface: runtime/
// implements it over MPI (with PT-Scotch as the graph partitioner), tests implement it with
// threads as ranks.
//
// Contract: every rank calls the same operations in the same order; a rank that fails
// reports it through agree() rather than leaving its peers waiting.
#include <cstdint>
#include <string>
#include <vector>

namespace partita::partition {

// The distributed graph a parallel partitioner takes, in ParMETIS v3's terms with 64-bit
// numbers: rank r holds vertices [vtxdist[r], vtxdist[r+1]); xadj/adjncy is the CSR of their
// undirected adjacency (global ids, no self loops, each edge stored in both directions);
// vwgt holds ncon weights per local vertex (empty: unit weights).
struct DistAdjacency {
  std::vector<int64_t> vtxdist;  // ranks + 1
  std::vector<int64_t> xadj;     // local vertices + 1
  std::vector<int64_t> adjncy;
  std::vector<int64_t> vwgt;  // local vertices * ncon, or empty
  int ncon = 1;
};

class DistComm {
 public:
  virtual ~DistComm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Personalized all-to-all: send[r] goes to rank r (send.size() == size()). Returns recv
  // with recv[r] = what rank r sent here. Any sizes: implementations cut big messages into
  // slices, so no message nears MPI's int counts.
  virtual std::vector<std::vector<uint8_t>> alltoall(std::vector<std::vector<uint8_t>> send) = 0;

  // In place over all ranks: sum (or max) of data[0, count).
  virtual void allreduce_sum(int64_t* data, size_t count) = 0;
  virtual void allreduce_max(int64_t* data, size_t count) = 0;

  // Every rank's `mine`, in rank order.
  virtual std::vector<std::vector<uint8_t>> allgather(const std::vector<uint8_t>& mine) = 0;

  // Error agreement: each rank passes its own failure text ("" when it succeeded). When any
  // rank failed, every rank throws Error with the text of the lowest failing rank (prefixed
  // "rank R: " on ranks other than R), so the job prints one line and exits together.
  virtual void agree(const std::string& my_error) = 0;

  // Parallel multilevel k-way partitioning of `graph` into `num_parts` parts. Returns the
  // part of each local vertex. Same graph, num_parts, seed and rank count give the same
  // result. imbalance: allowed max/mean load per constraint, e.g. 1.03.
  virtual std::vector<int32_t> part_graph(const DistAdjacency& graph, int num_parts,
                                          double imbalance, uint64_t seed) = 0;
};

}  // namespace partita::partition
