#pragma once
// partition::DistComm over MPI, for `partita partition` under mpirun (partition/
// pipeline.h), with PT-Scotch as part_graph.
//
// Every wait has a deadline (options.timeout_s): a rank that never joins, or dies, turns a
// collective into a TimeoutError on the others, never a hang. The exception: PT-Scotch's
// own MPI calls inside part_graph are blocking (a dying rank there ends the job through
// mpirun); part_graph first proves with a deadline that every rank has arrived.
//
// alltoall moves big buffers as slices of at most options.slice_bytes (point-to-point, at
// most one slice per peer in flight each way), so no MPI count nears 2^31 and the extra
// memory is none: slices are received straight into the result and each send buffer is
// freed once sent.
//
// Without PT-Scotch at build time (PARTITA_HAVE_PTSCOTCH unset), part_graph throws Error
// saying so; everything else works.
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>

#include "partita/comm/mpi_collectives.h"
#include "partita/partition/dist_comm.h"

namespace partita::runtime {

struct MpiDistCommOptions {
  double timeout_s = 600;                 // per wait; stages compute between collectives
  size_t slice_bytes = size_t{64} << 20;  // largest point-to-point message of alltoall
  // PT-Scotch's strategy: the flags of SCOTCH_stratDgraphMapBuild by name ("default",
  // "quality", "speed", "balance"), optionally suffixed "-fold"/"-nofold" (its fold-dup
  // coarsening replaced), or "string:<strategy>" passed to SCOTCH_stratDgraphMap as is.
  std::string scotch_strategy = "default";
};

// Whether this build has PT-Scotch (part_graph works).
bool have_ptscotch();

class MpiDistComm : public partition::DistComm {
 public:
  // Collective over `comm` (communicators of its own are duplicated with the deadline).
  explicit MpiDistComm(MPI_Comm comm, MpiDistCommOptions options = {});
  ~MpiDistComm() override;
  MpiDistComm(const MpiDistComm&) = delete;
  MpiDistComm& operator=(const MpiDistComm&) = delete;

  int rank() const override { return collectives_.rank(); }
  int size() const override { return collectives_.size(); }

  std::vector<std::vector<uint8_t>> alltoall(std::vector<std::vector<uint8_t>> send) override;
  void allreduce_sum(int64_t* data, size_t count) override;
  void allreduce_max(int64_t* data, size_t count) override;
  std::vector<std::vector<uint8_t>> allgather(const std::vector<uint8_t>& mine) override;
  void agree(const std::string& my_error) override;
  std::vector<int32_t> part_graph(const partition::DistAdjacency& graph, int num_parts,
                                  double imbalance, uint64_t seed) override;

 private:
  MpiCollectives collectives_;    // deadline-bounded collectives
  MPI_Comm p2p_ = MPI_COMM_NULL;  // alltoall slices and PT-Scotch
  MpiDistCommOptions options_;
  bool abandoned_ = false;  // a point-to-point wait timed out: p2p_ has pending requests
};

// PT-Scotch's k-way partition of `graph` on `comm` (every rank of it). Implemented in
// scotch_part_graph.cc; throws Error when PT-Scotch is missing or fails.
std::vector<int32_t> scotch_part_graph(MPI_Comm comm, const partition::DistAdjacency& graph,
                                       int num_parts, double imbalance, uint64_t seed,
                                       const std::string& strategy = "default");

}  // namespace partita::runtime
