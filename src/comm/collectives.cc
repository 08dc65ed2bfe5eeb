#include "partita/comm/collectives.h"

#include <algorithm>
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
  std::vector<MPI_Request> requests{*request};
  wait_all(requests, what, count);
  *request = requests[0];
}

void Collectives::wait_all(std::vector<MPI_Request>& requests, const char* what, size_t count) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options_.timeout_s));
  Backoff backoff(options_.min_sleep, options_.max_sleep, options_.sleep_growth);
  while (true) {
    int done = 0;
    check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                          MPI_STATUSES_IGNORE),
              "{} of {} values on rank {}", what, count, rank_);
    if (done) return;
    if (Clock::now() >= deadline) {
      // A pending collective cannot be cancelled or freed: abandon the requests.
      abandoned_ = true;
      std::string message =
          fmt::format("{} of {} values on rank {}: not every rank of {} joined within {:g} s", what,
                      count, rank_, size_, options_.timeout_s);
      if (diagnose_) {
        try {
          message += "; " + diagnose_();
        } catch (const std::exception& e) {
          message += fmt::format("; probing the other ranks failed: {}", e.what());
        }
      }
      throw TimeoutError(message);
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
  reduce_buckets(data, count, std::max<size_t>(count, 1), elem_size, type, op);
}

void Collectives::reduce_buckets(void* data, size_t count, size_t bucket_count, size_t elem_size,
                                 MPI_Datatype type, ReduceOp op) {
  PARTITA_CHECK(bucket_count >= 1 && bucket_count <= static_cast<size_t>(INT_MAX), CommError,
                "allreduce on rank {}: bucket of {} values out of [1, {}]", rank_, bucket_count,
                INT_MAX);
  check_usable("allreduce");
  if (count == 0) return;
  // MPI writes the result into this buffer, possibly after a timeout: it is leaked then.
  auto* buffer = new uint8_t[count * elem_size];
  std::memcpy(buffer, data, count * elem_size);
  std::vector<MPI_Request> requests;
  try {
    for (size_t first = 0; first < count; first += bucket_count) {
      const size_t n = std::min(bucket_count, count - first);
      requests.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Iallreduce(MPI_IN_PLACE, buffer + first * elem_size, static_cast<int>(n), type,
                               to_mpi(op), comm_, &requests.back()),
                "MPI_Iallreduce of {} values on rank {}", n, rank_);
    }
    wait_all(requests, "allreduce", count);
  } catch (const TimeoutError&) {
    throw;  // `buffer` stays with the abandoned requests
  } catch (...) {
    // Requests already started still write into buffer: abandon them with it.
    if (requests.size() > 1 || (requests.size() == 1 && requests[0] != MPI_REQUEST_NULL)) {
      abandoned_ = true;
      throw;
    }
    delete[] buffer;
    throw;
  }
  std::memcpy(data, buffer, count * elem_size);
  delete[] buffer;
}

void Collectives::broadcast_bytes(void* data, size_t count, size_t elem_size, MPI_Datatype type,
                                  int root) {
  PARTITA_CHECK(count <= static_cast<size_t>(INT_MAX), CommError,
                "broadcast on rank {}: {} values is more than one call can send ({})", rank_,
                count, INT_MAX);
  PARTITA_CHECK(root >= 0 && root < size_, CommError, "broadcast on rank {}: root {} out of [0, {})",
                rank_, root, size_);
  check_usable("broadcast");
  if (count == 0) return;
  auto* buffer = new uint8_t[count * elem_size];  // leaked with the request on a timeout
  std::memcpy(buffer, data, count * elem_size);
  MPI_Request request = MPI_REQUEST_NULL;
  try {
    check_mpi(MPI_Ibcast(buffer, static_cast<int>(count), type, root, comm_, &request),
              "MPI_Ibcast of {} values on rank {}", count, rank_);
    wait(&request, "broadcast", count);
  } catch (const TimeoutError&) {
    throw;
  } catch (...) {
    delete[] buffer;
    throw;
  }
  std::memcpy(data, buffer, count * elem_size);
  delete[] buffer;
}

}  // namespace partita
