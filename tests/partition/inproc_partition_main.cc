// The partition pipeline (run_partition) with threads as ranks, for
// partition_mpi.sh to compare with `mpirun -np R partita partition` byte for byte:
//
//     inproc_partition DATASET OUT RANKS PARTS [balance-train] [undirected]
//
// Method metis with the default (coarse) partitioner, seed 1, one thread per rank, as the
// script's mpirun runs. Prints the first failing rank's error and exits 1 on failure.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "helpers/inproc_dist_comm.h"
#include "helpers/on_threads.h"
#include "partita/partition/partition.h"

int main(int argc, char** argv) {
  using namespace partita;
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s DATASET OUT RANKS PARTS [balance-train] [undirected]\n",
                 argv[0]);
    return 2;
  }
  data::LoadOptions load;
  partition::PartitionOptions o;
  o.out_dir = argv[2];
  const int ranks = std::atoi(argv[3]);
  o.num_parts = std::atoi(argv[4]);
  o.method = partition::Method::kMetis;
  o.seed = 1;
  o.threads = 1;
  load.threads = 1;
  for (int i = 5; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "balance-train") {
      o.balance_train = true;
    } else if (flag == "undirected") {
      load.undirected = true;
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  testing::InProcessDistComms comms(ranks);
  const std::vector<std::string> failures = testing::on_threads(
      ranks, [&](int r) { partition::run_partition(argv[1], load, o, comms.member(r)); });
  for (int r = 0; r < ranks; ++r) {
    if (failures[r].empty()) continue;
    std::fprintf(stderr, "error: rank %d: %s\n", r, failures[r].c_str());
    return 1;
  }
  return 0;
}
