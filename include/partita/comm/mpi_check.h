#pragma once
// Turns MPI return codes into CommError. Only meaningful on communicators whose error
// handler is MPI_ERRORS_RETURN (every communicator the comm/ layer creates has it); under
// the default MPI_ERRORS_ARE_FATAL a failing call aborts the job before returning.
#include <fmt/format.h>
#include <mpi.h>

#include <string>

#include "partita/comm/errors.h"

namespace partita {

// "MPI_ERR_RANK: invalid rank" for an MPI error code (MPI_Error_string).
std::string mpi_error_string(int code);

// Throws CommError("<what>: <MPI error string>").
[[noreturn]] void throw_mpi_error(int code, const std::string& what);

// Checks an MPI return code; the message is formatted only on failure.
// Example: check_mpi(MPI_Isend(...), "MPI_Isend of {} bytes to rank {}", n, dest);
template <class... Args>
inline void check_mpi(int code, fmt::format_string<Args...> what, Args&&... args) {
  if (code != MPI_SUCCESS) throw_mpi_error(code, fmt::format(what, std::forward<Args>(args)...));
}

// A communicator of the caller's own: a duplicate of `comm` (collective over it) with the
// MPI_ERRORS_RETURN handler. Like MPI_Comm_dup, but waits at most timeout_s for every rank
// (MPI_Comm_idup polled with backoff): past it, TimeoutError naming `what`, and the pending
// duplication is abandoned. Stores this rank's rank and size in *rank and *size.
MPI_Comm dup_communicator(MPI_Comm comm, double timeout_s, const char* what, int* rank, int* size);

}  // namespace partita
