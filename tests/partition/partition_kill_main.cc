// The partition pipeline under mpirun with one rank killed at a known point, for
// partition_mpi.sh: run_partition over runtime::MpiDistComm, wrapped in a communicator that
// raises SIGKILL (no cleanup, no message, as the OOM killer or a lost host would) on rank
// RANK when the pipeline reaches PHASE (DistComm::reached: read, build_graph, assign, write).
// The hook lives in this test program, not in the library.
//
//     partition_kill PHASE:RANK DATASET OUT PARTS metis|random [undirected]
//
// Seed 1, one thread per rank. A failure on a rank that survives prints one error line.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "partita/comm/mpi_scope.h"
#include "partita/core/log.h"
#include "partita/partition/partition.h"
#include "partita/runtime/mpi_dist_comm.h"

namespace partita {
namespace {

class KillingComm : public partition::DistComm {
 public:
  KillingComm(partition::DistComm& inner, std::string phase, int rank)
      : inner_(inner), phase_(std::move(phase)), rank_(rank) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::vector<std::vector<uint8_t>> alltoall(std::vector<std::vector<uint8_t>> send) override {
    return inner_.alltoall(std::move(send));
  }
  void allreduce_sum(int64_t* data, size_t count) override { inner_.allreduce_sum(data, count); }
  void allreduce_max(int64_t* data, size_t count) override { inner_.allreduce_max(data, count); }
  std::vector<std::vector<uint8_t>> allgather(const std::vector<uint8_t>& mine) override {
    return inner_.allgather(mine);
  }
  void agree(const std::string& my_error) override { inner_.agree(my_error); }
  std::vector<int32_t> part_graph(const partition::DistAdjacency& graph, int num_parts,
                                  double imbalance, uint64_t seed) override {
    return inner_.part_graph(graph, num_parts, imbalance, seed);
  }
  void reached(const char* phase) override {
    if (phase == phase_ && inner_.rank() == rank_) ::raise(SIGKILL);
  }

 private:
  partition::DistComm& inner_;
  std::string phase_;
  int rank_;
};

int run(int argc, char** argv) {
  const std::string at = argv[1];
  const size_t colon = at.find(':');
  data::LoadOptions load;
  partition::PartitionOptions o;
  o.out_dir = argv[3];
  o.num_parts = std::atoi(argv[4]);
  o.method =
      std::string(argv[5]) == "random" ? partition::Method::kRandom : partition::Method::kMetis;
  o.seed = 1;
  o.threads = 1;
  load.threads = 1;
  load.undirected = argc > 6 && std::string(argv[6]) == "undirected";
  MpiScope scope(&argc, &argv);
  if (scope.rank() != 0) set_log_level(LogLevel::kQuiet);
  try {
    runtime::MpiDistCommOptions mo;
    mo.timeout_s = 60;
    runtime::MpiDistComm mpi(scope.world(), mo);
    KillingComm comm(mpi, at.substr(0, colon), std::atoi(at.c_str() + colon + 1));
    partition::run_partition(argv[2], load, o, comm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: rank %d: %s\n", scope.rank(), e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 0;
}

}  // namespace
}  // namespace partita

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s PHASE:RANK DATASET OUT PARTS metis|random [undirected]\n",
                 argv[0]);
    return 2;
  }
  return partita::run(argc, argv);
}
