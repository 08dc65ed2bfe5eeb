#pragma once
// This process's place in a job started by a launcher (mpirun, srun), read from the
// launcher's environment: what the command line needs before MPI starts (flags are checked
// first), and without starting it.
namespace partita::cli {

// This process's rank in the job; 0 when no launcher started it.
int launcher_rank();

// The number of processes the launcher started; 1 alone.
int launcher_size();

}  // namespace partita::cli
