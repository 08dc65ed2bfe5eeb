// Under mpirun (or alone): each rank prints one line
//   rank=R local=L/N cores=C mask=0,1,...
// where cores is MpiScope::cores_per_rank() and mask the CPUs of its affinity mask, for
// multihost_test.sh's affinity cases. Exit code 0, or 1 with an `error:` line.
#include <sched.h>

#include <cstdio>
#include <exception>
#include <string>

#include "partita/comm/mpi_scope.h"

int main(int argc, char** argv) {
  try {
    partita::MpiScope mpi(&argc, &argv);
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof(set), &set);
    std::string mask;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) mask += (mask.empty() ? "" : ",") + std::to_string(cpu);
    std::printf("rank=%d local=%d/%d cores=%d mask=%s\n", mpi.rank(), mpi.local_rank(),
                mpi.local_size(), mpi.cores_per_rank(), mask.c_str());
    std::fflush(stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
