#include "launcher_env.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>

namespace partita::cli {
namespace {

// The first of `names` set and not empty, as a number; `fallback` when none is.
int first_number(std::initializer_list<const char*> names, int fallback) {
  for (const char* name : names) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return std::atoi(value);
  }
  return fallback;
}

}  // namespace

// Open MPI (OMPI_*), PMIx launchers (PMIX_*), MPICH's Hydra (PMI_*) and Slurm's srun.
int launcher_rank() {
  return std::max(
      0, first_number({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}, 0));
}

int launcher_size() {
  return std::max(
      1, first_number({"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "SLURM_NTASKS"}, 1));
}

}  // namespace partita::cli
