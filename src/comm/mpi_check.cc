#include "partita/comm/mpi_check.h"

#include <chrono>
#include <thread>

#include "backoff.h"

namespace partita {

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    return fmt::format("MPI error code {}", code);
  }
  return std::string(text, static_cast<size_t>(length));
}

void throw_mpi_error(int code, const std::string& what) {
  throw CommError(fmt::format("{}: {}", what, mpi_error_string(code)));
}

MPI_Comm dup_communicator(MPI_Comm comm, double timeout_s, const char* what, int* rank_out,
                          int* size_out) {
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(comm, &rank), "{}: MPI_Comm_rank", what);
  check_mpi(MPI_Comm_size(comm, &size), "{}: MPI_Comm_size", what);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Comm_idup(comm, &dup, &request), "{}: MPI_Comm_idup on rank {}", what, rank);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_s));
  Backoff backoff(std::chrono::microseconds(10), std::chrono::microseconds(1000));
  while (true) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "{}: MPI_Comm_idup on rank {}", what,
              rank);
    if (done) {
      const int rc = MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
      if (rc != MPI_SUCCESS) {
        MPI_Comm_free(&dup);
        throw_mpi_error(rc, fmt::format("{}: MPI_Comm_set_errhandler on rank {}", what, rank));
      }
      *rank_out = rank;
      *size_out = size;
      return dup;
    }
    // The pending duplication cannot be cancelled: it is abandoned with the job.
    PARTITA_CHECK(Clock::now() < deadline, TimeoutError,
                  "{} on rank {}: not every rank of {} got there within {:g} s (a rank did not "
                  "start, or is stuck before it)",
                  what, rank, size, timeout_s);
    std::this_thread::sleep_for(backoff.next());
  }
}

}  // namespace partita
