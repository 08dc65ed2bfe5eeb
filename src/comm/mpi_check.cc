#include "partita/comm/mpi_check.h"

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

}  // namespace partita
