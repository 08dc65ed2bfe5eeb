#pragma once
// The body of main() in the MPI check programs (tests/*/*_mpi_check.cc): runs check(mpi)
// inside an MpiScope and returns its exit status. An exception from `check` prints
// "error: rank R: ..." and aborts the whole job (MPI_Abort), so a rank that fails alone does
// not leave the others waiting in a collective; one from MPI's start-up prints "error: ..."
// and returns 1.
#include <cstdio>
#include <exception>

#include "partita/comm/mpi_scope.h"

namespace partita::testing {

template <typename Check>
int run_mpi_check(int* argc, char*** argv, Check check) {
  try {
    MpiScope mpi(argc, argv);
    try {
      return check(mpi);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: rank %d: %s\n", mpi.rank(), e.what());
      MPI_Abort(mpi.world(), 1);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 1;
}

}  // namespace partita::testing
