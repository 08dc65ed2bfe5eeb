#pragma once
// The messaging the partition pipeline needs (partition/pipeline.h). partition/ sits below
// comm/ and runtime/, so it names only this interface: runtime/ implements it over MPI (with
// PT-Scotch as the graph partitioner), tests with threads as ranks, and OneRankComm (below)
// is one process: the pipeline in one process is its one-rank case, not a second path.
//
// Contract: every rank calls the same operations in the same order; a rank that fails
// reports it through agree() rather than leaving its peers waiting.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/error.h"

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

  // The pipeline tells each rank's communicator where it stands: "read", "build_graph",
  // "assign" as each stage ends, "write" once the output files exist and before anything is
  // in them. Not a collective; the default does nothing. Tests act on it (fail or kill a rank
  // at a known point: tests/partition/partition_kill_main.cc).
  virtual void reached(const char* phase) { (void)phase; }
};

// The communicator of one process: rank 0 of 1. alltoall and allgather hand the buffers
// back, reductions leave the data as it is, agree throws Error(my_error) when it is not
// empty. part_graph throws Error: a parallel partitioner needs several ranks (one process
// partitions the whole graph with METIS, partition/assign.h).
class OneRankComm final : public DistComm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::vector<uint8_t>> alltoall(std::vector<std::vector<uint8_t>> send) override {
    PARTITA_CHECK(send.size() == 1, Error, "alltoall: {} buffers for 1 rank", send.size());
    return send;
  }
  void allreduce_sum(int64_t*, size_t) override {}
  void allreduce_max(int64_t*, size_t) override {}
  std::vector<std::vector<uint8_t>> allgather(const std::vector<uint8_t>& mine) override {
    return {mine};
  }
  void agree(const std::string& my_error) override {
    if (!my_error.empty()) throw Error(my_error);
  }
  std::vector<int32_t> part_graph(const DistAdjacency&, int, double, uint64_t) override {
    throw Error("part_graph: a parallel partitioner needs several ranks");
  }
};

}  // namespace partita::partition
