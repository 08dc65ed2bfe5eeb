#include "partita/comm/mpi_collectives.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <thread>

#include "backoff.h"
#include "partita/comm/mpi_check.h"
#include "partita/core/log.h"

namespace partita {
namespace {

MPI_Datatype to_mpi(ElemType type) {
  switch (type) {
    case ElemType::kInt32:
      return MPI_INT32_T;
    case ElemType::kInt64:
      return MPI_INT64_T;
    case ElemType::kUint64:
      return MPI_UINT64_T;
    case ElemType::kFloat32:
      return MPI_FLOAT;
    case ElemType::kFloat64:
    default:
      return MPI_DOUBLE;
  }
}

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

MpiCollectives::MpiCollectives(MPI_Comm comm, CollectiveOptions options) : options_(options) {
  PARTITA_CHECK(options_.timeout_s > 0, CommError, "Collectives: timeout {} s must be positive",
                options_.timeout_s);
  comm_ = dup_communicator(comm, options_.timeout_s, "setting up the collectives", &rank_, &size_);
}

MpiCollectives::~MpiCollectives() {
  if (abandoned_) return;  // freeing a communicator under a pending collective can crash
  const int rc = MPI_Comm_free(&comm_);
  if (rc != MPI_SUCCESS) {
    log_warning("Collectives on rank {}: MPI_Comm_free: {}", rank_, mpi_error_string(rc));
  }
}

void MpiCollectives::wait(MPI_Request* request, const char* what, size_t count) {
  std::vector<MPI_Request> requests{*request};
  wait_all(requests, what, count);
  *request = requests[0];
}

void MpiCollectives::wait_all(std::vector<MPI_Request>& requests, const char* what, size_t count) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options_.timeout_s));
  Backoff backoff(options_.min_sleep, options_.max_sleep, options_.sleep_growth);
  while (true) {
    int done = 0;
    check_mpi(
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
        "{} of {} values on rank {}", what, count, rank_);
    if (done) return;
    if (Clock::now() >= deadline) {
      // A pending collective cannot be cancelled or freed: abandon the requests.
      abandoned_ = true;
      std::string message =
          fmt::format("{} of {} values on rank {}: not every rank of {} joined within {:g} s", what,
                      count, rank_, size_, options_.timeout_s);
      throw TimeoutError(message + diagnose_timeout());
    }
    std::this_thread::sleep_for(backoff.next());
  }
}

void MpiCollectives::check_usable(const char* what) const {
  PARTITA_CHECK(!abandoned_, CommError,
                "{} on rank {}: an earlier collective on this communicator timed out", what, rank_);
}

void MpiCollectives::barrier() {
  check_usable("barrier");
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier on rank {}", rank_);
  wait(&request, "barrier", 0);
}

void MpiCollectives::reduce(void* data, size_t count, size_t bucket_count, ElemType type,
                            ReduceOp op) {
  if (bucket_count == 0) {
    PARTITA_CHECK(count <= static_cast<size_t>(INT_MAX), CommError,
                  "allreduce on rank {}: {} values is more than one call can reduce ({}); split "
                  "into buckets",
                  rank_, count, INT_MAX);
    bucket_count = std::max<size_t>(count, 1);
  }
  PARTITA_CHECK(bucket_count <= static_cast<size_t>(INT_MAX), CommError,
                "allreduce on rank {}: bucket of {} values out of [1, {}]", rank_, bucket_count,
                INT_MAX);
  check_usable("allreduce");
  if (count == 0) return;
  const size_t width = elem_size(type);
  // MPI writes the result into this buffer, possibly after a timeout: it is leaked then.
  auto* buffer = new uint8_t[count * width];
  std::memcpy(buffer, data, count * width);
  std::vector<MPI_Request> requests;
  try {
    for (size_t first = 0; first < count; first += bucket_count) {
      const size_t n = std::min(bucket_count, count - first);
      requests.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Iallreduce(MPI_IN_PLACE, buffer + first * width, static_cast<int>(n),
                               to_mpi(type), to_mpi(op), comm_, &requests.back()),
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
  std::memcpy(data, buffer, count * width);
  delete[] buffer;
}

void MpiCollectives::broadcast_bytes(void* data, size_t bytes, int root) {
  PARTITA_CHECK(bytes <= static_cast<size_t>(INT_MAX), CommError,
                "broadcast on rank {}: {} bytes is more than one call can send ({})", rank_, bytes,
                INT_MAX);
  PARTITA_CHECK(root >= 0 && root < size_, CommError,
                "broadcast on rank {}: root {} out of [0, {})", rank_, root, size_);
  check_usable("broadcast");
  if (bytes == 0) return;
  auto* buffer = new uint8_t[bytes];  // leaked with the request on a timeout
  std::memcpy(buffer, data, bytes);
  MPI_Request request = MPI_REQUEST_NULL;
  try {
    check_mpi(MPI_Ibcast(buffer, static_cast<int>(bytes), MPI_BYTE, root, comm_, &request),
              "MPI_Ibcast of {} bytes on rank {}", bytes, rank_);
    wait(&request, "broadcast", bytes);
  } catch (const TimeoutError&) {
    throw;
  } catch (...) {
    delete[] buffer;
    throw;
  }
  std::memcpy(data, buffer, bytes);
  delete[] buffer;
}

std::vector<uint8_t> MpiCollectives::allgather_bytes(const void* mine, size_t bytes) {
  PARTITA_CHECK(bytes <= static_cast<size_t>(INT_MAX), CommError,
                "allgather on rank {}: {} bytes is more than one call can send ({})", rank_, bytes,
                INT_MAX);
  check_usable("allgather");
  // Sizes first (a fixed-size allgather), then the data (allgatherv). Both buffers are
  // leaked with their request on a timeout.
  auto* sizes = new int[static_cast<size_t>(size_)];
  sizes[rank_] = static_cast<int>(bytes);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(MPI_IN_PLACE, 1, MPI_INT, sizes, 1, MPI_INT, comm_, &request),
            "MPI_Iallgather of sizes on rank {}", rank_);
  wait(&request, "allgather (sizes)", 1);
  std::vector<int> counts(sizes, sizes + size_), offsets(static_cast<size_t>(size_));
  delete[] sizes;
  int64_t total = 0;
  for (int r = 0; r < size_; ++r) {
    offsets[r] = static_cast<int>(std::min<int64_t>(total, INT_MAX));
    total += counts[r];
  }
  PARTITA_CHECK(total <= INT_MAX, CommError,
                "allgather on rank {}: {} bytes in all is more than one call can gather ({})",
                rank_, total, INT_MAX);
  auto* buffer = new uint8_t[static_cast<size_t>(std::max<int64_t>(total, 1))];
  if (bytes > 0) std::memcpy(buffer + offsets[rank_], mine, bytes);
  check_mpi(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_BYTE, buffer, counts.data(), offsets.data(),
                            MPI_BYTE, comm_, &request),
            "MPI_Iallgatherv of {} bytes on rank {}", total, rank_);
  wait(&request, "allgather", static_cast<size_t>(total));
  std::vector<uint8_t> all(buffer, buffer + total);
  delete[] buffer;
  return all;
}

}  // namespace partita
