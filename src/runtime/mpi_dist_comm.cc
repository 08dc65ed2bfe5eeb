#include "partita/runtime/mpi_dist_comm.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "partita/comm/errors.h"
#include "partita/comm/mpi_check.h"
#include "partita/core/log.h"

namespace partita::runtime {
namespace {

constexpr int kSliceTag = 2501;  // alltoall slices on p2p_ (nothing else sends there)
// allgather goes through the collectives (int counts) up to this many bytes in all.
constexpr int64_t kGatherDirectBytes = int64_t{1} << 30;

}  // namespace

MpiDistComm::MpiDistComm(MPI_Comm comm, MpiDistCommOptions options)
    : collectives_(comm, CollectiveOptions{options.timeout_s}), options_(options) {
  PARTITA_CHECK(options_.slice_bytes >= 1 && options_.slice_bytes <= (size_t{1} << 30), CommError,
                "MpiDistComm: slice of {} bytes outside [1, 2^30]", options_.slice_bytes);
  int rank = 0, size = 0;
  p2p_ = dup_communicator(comm, options_.timeout_s, "setting up the partition messaging", &rank,
                          &size);
}

MpiDistComm::~MpiDistComm() {
  if (abandoned_) return;  // pending requests: freeing the communicator could crash
  const int rc = MPI_Comm_free(&p2p_);
  if (rc != MPI_SUCCESS) log_warning("MpiDistComm: MPI_Comm_free: {}", mpi_error_string(rc));
}

std::vector<std::vector<uint8_t>> MpiDistComm::alltoall(std::vector<std::vector<uint8_t>> send) {
  const int me = rank(), ranks = size();
  PARTITA_CHECK(static_cast<int>(send.size()) == ranks, CommError,
                "alltoall on rank {}: {} buffers for {} ranks", me, send.size(), ranks);
  PARTITA_CHECK(!abandoned_, CommError,
                "alltoall on rank {}: an earlier exchange on this communicator timed out", me);
  // Every rank's sizes to every rank (ranks^2 numbers), then slices point to point.
  std::vector<uint64_t> mine(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) mine[r] = send[r].size();
  const std::vector<uint64_t> sizes = collectives_.allgather(mine);
  std::vector<std::vector<uint8_t>> recv(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    if (r != me) recv[r].resize(sizes[static_cast<size_t>(r) * ranks + me]);
  recv[me] = std::move(send[me]);

  const size_t slice = options_.slice_bytes;
  auto slices = [&](size_t bytes) { return (bytes + slice - 1) / slice; };
  size_t rounds = 0;
  for (int r = 0; r < ranks; ++r) {
    if (r == me) continue;
    rounds = std::max({rounds, slices(send[r].size()), slices(recv[r].size())});
  }
  using Clock = std::chrono::steady_clock;
  std::vector<MPI_Request> requests;
  for (size_t k = 0; k < rounds; ++k) {
    requests.clear();
    for (int r = 0; r < ranks; ++r) {
      if (r == me) continue;
      const size_t offset = k * slice;
      if (offset < recv[r].size()) {
        const int n = static_cast<int>(std::min(slice, recv[r].size() - offset));
        requests.push_back(MPI_REQUEST_NULL);
        check_mpi(
            MPI_Irecv(recv[r].data() + offset, n, MPI_BYTE, r, kSliceTag, p2p_, &requests.back()),
            "alltoall: receiving {} bytes from rank {} on rank {}", n, r, me);
      }
      if (offset < send[r].size()) {
        const int n = static_cast<int>(std::min(slice, send[r].size() - offset));
        requests.push_back(MPI_REQUEST_NULL);
        check_mpi(
            MPI_Isend(send[r].data() + offset, n, MPI_BYTE, r, kSliceTag, p2p_, &requests.back()),
            "alltoall: sending {} bytes to rank {} on rank {}", n, r, me);
      }
    }
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(options_.timeout_s));
    auto sleep = std::chrono::microseconds(10);
    while (true) {
      int done = 0;
      check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                            MPI_STATUSES_IGNORE),
                "alltoall: slice {} of {} on rank {}", k + 1, rounds, me);
      if (done) break;
      if (Clock::now() >= deadline) {
        // Pending requests still point into these buffers: abandon them with the requests.
        abandoned_ = true;
        new std::vector<std::vector<uint8_t>>(std::move(send));
        new std::vector<std::vector<uint8_t>>(std::move(recv));
        throw TimeoutError(fmt::format(
            "alltoall on rank {}: slice {} of {} did not complete within {:g} s (a rank of {} "
            "is missing or stopped)",
            me, k + 1, rounds, options_.timeout_s, ranks));
      }
      std::this_thread::sleep_for(sleep);
      sleep =
          std::min(sleep * 9 / 8 + std::chrono::microseconds(1), std::chrono::microseconds(1000));
    }
    // Free what has been sent in full.
    for (int r = 0; r < ranks; ++r)
      if (r != me && !send[r].empty() && (k + 1) * slice >= send[r].size())
        std::vector<uint8_t>().swap(send[r]);
  }
  return recv;
}

void MpiDistComm::allreduce_sum(int64_t* data, size_t count) {
  collectives_.allreduce(data, count, ReduceOp::kSum);
}

void MpiDistComm::allreduce_max(int64_t* data, size_t count) {
  collectives_.allreduce(data, count, ReduceOp::kMax);
}

std::vector<std::vector<uint8_t>> MpiDistComm::allgather(const std::vector<uint8_t>& mine) {
  const int ranks = size();
  const std::vector<int64_t> sizes =
      collectives_.allgather(std::vector<int64_t>{static_cast<int64_t>(mine.size())});
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  std::vector<std::vector<uint8_t>> out(static_cast<size_t>(ranks));
  if (total > kGatherDirectBytes) {
    // Too big for one int-counted collective: every rank sends `mine` to every rank.
    return alltoall(std::vector<std::vector<uint8_t>>(static_cast<size_t>(ranks), mine));
  }
  const std::vector<uint8_t> bytes = collectives_.allgather(mine);
  size_t offset = 0;
  for (int r = 0; r < ranks; ++r) {
    out[r].assign(bytes.begin() + offset, bytes.begin() + offset + sizes[r]);
    offset += static_cast<size_t>(sizes[r]);
  }
  return out;
}

void MpiDistComm::agree(const std::string& my_error) {
  const std::vector<std::vector<uint8_t>> all =
      allgather(std::vector<uint8_t>(my_error.begin(), my_error.end()));
  for (int r = 0; r < size(); ++r) {
    if (all[r].empty()) continue;
    const std::string text(all[r].begin(), all[r].end());
    throw Error(r == rank() ? text : "rank " + std::to_string(r) + ": " + text);
  }
}

std::vector<int32_t> MpiDistComm::part_graph(const partition::DistAdjacency& graph, int num_parts,
                                             double imbalance, uint64_t seed) {
  PARTITA_CHECK(!abandoned_, CommError,
                "part_graph on rank {}: an earlier exchange on this communicator timed out",
                rank());
  // PT-Scotch's MPI calls have no deadline: prove first that every rank is here.
  collectives_.barrier();
  return scotch_part_graph(p2p_, graph, num_parts, imbalance, seed, options_.scotch_strategy);
}

}  // namespace partita::runtime
