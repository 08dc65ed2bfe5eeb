#include "partita/comm/collectives.h"

#include <climits>
#include <cstring>
#include <thread>

#include "backoff.h"
#include "partita/comm/mpi_check.h"
#include "partita/core/log.h"

namespace partita {
namespace {

MPI_Op to_mpi(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMin:
      return MPI_MIN;
    case ReduceOp::kMax:
      return MPI_MAX;
    case ReduceOp::kSum:
    default:
      return MPI_SUM;
  }
}

}  // namespace

Collectives::Collectives(MPI_Comm comm, CollectiveOptions options) : options_(options) {
  PARTITA_CHECK(options_.timeout_s > 0, CommError, "Collectives: timeout {} s must be positive",
                options_.timeout_s);
  check_mpi(MPI_Comm_dup(comm, &comm_), "Collectives: MPI_Comm_dup");
  try {
    check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN),
              "Collectives: MPI_Comm_set_errhandler");
    check_mpi(MPI_Comm_rank(comm_, &rank_), "Collectives: MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &size_), "Collectives: MPI_Comm_size");
  } catch (...) {
    MPI_Comm_free(&comm_);
    throw;
  }
}

Collectives::~Collectives() {
  if (abandoned_) return;  // freeing a communicator under a pending collective can crash
  const int rc = MPI_Comm_free(&comm_);
  if (rc != MPI_SUCCESS) {
    log_warning("Collectives on rank {}: MPI_Comm_free: {}", rank_, mpi_error_string(rc));
  }
}

void Collectives::wait(MPI_Request* request, const char* what, size_t count) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options_.timeout_s));
  Backoff backoff(options_.min_sleep, options_.max_sleep, options_.sleep_growth);
  while (true) {
    int done = 0;
    check_mpi(MPI_Test(request, &done, MPI_STATUS_IGNORE), "{} of {} values on rank {}", what,
              count, rank_);
    if (done) return;
    if (Clock::now() >= deadline) {
      // A pending collective cannot be cancelled or freed: abandon the request.
      abandoned_ = true;
      throw TimeoutError(
          fmt::format("{} of {} values on rank {}: not every rank of {} joined within {:g} s", what,
                      count, rank_, size_, options_.timeout_s));
    }
    std::this_thread::sleep_for(backoff.next());
  }
}

void Collectives::check_usable(const char* what) const {
  PARTITA_CHECK(!abandoned_, CommError,
                "{} on rank {}: an earlier collective on this communicator timed out", what, rank_);
}

void Collectives::barrier() {
  check_usable("barrier");
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier on rank {}", rank_);
  wait(&request, "barrier", 0);
}

void Collectives::allreduce_bytes(void* data, size_t count, size_t elem_size, MPI_Datatype type,
                                  ReduceOp op) {
  PARTITA_CHECK(count <= static_cast<size_t>(INT_MAX), CommError,
                "allreduce on rank {}: {} values is more than one call can reduce ({}); split "
                "into buckets",
                rank_, count, INT_MAX);
  check_usable("allreduce");
  if (count == 0) return;
  // MPI writes the result into this buffer, possibly after a timeout: it is leaked then.
  auto* buffer = new uint8_t[count * elem_size];
  std::memcpy(buffer, data, count * elem_size);
  MPI_Request request = MPI_REQUEST_NULL;
  try {
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, buffer, static_cast<int>(count), type, to_mpi(op), comm_,
                             &request),
              "MPI_Iallreduce of {} values on rank {}", count, rank_);
    wait(&request, "allreduce", count);
  } catch (const TimeoutError&) {
    throw;  // `buffer` stays with the abandoned request
  } catch (...) {
    delete[] buffer;
    throw;
  }
  std::memcpy(data, buffer, count * elem_size);
  delete[] buffer;
}

}  // namespace partita
