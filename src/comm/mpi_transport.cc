#include "partita/comm/mpi_transport.h"

#include <chrono>
#include <climits>
#include <exception>
#include <thread>

#include "backoff.h"
#include "partita/comm/errors.h"
#include "partita/comm/mpi_check.h"
#include "partita/core/log.h"

namespace partita {

MpiTransport::MpiTransport(MPI_Comm comm, double receive_timeout_s)
    : receive_timeout_s_(receive_timeout_s) {
  PARTITA_CHECK(receive_timeout_s > 0, CommError,
                "MpiTransport: receive timeout {} s must be "
                "positive",
                receive_timeout_s);
  comm_ =
      dup_communicator(comm, receive_timeout_s, "setting up the request transport", &rank_, &size_);
}

MpiTransport::~MpiTransport() {
  using Clock = std::chrono::steady_clock;
  const auto give_up = Clock::now() + std::chrono::milliseconds(100);
  try {
    while (progress() > 0 && Clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  } catch (const std::exception& e) {
    log_warning("MpiTransport on rank {}: while draining sends: {}", rank_, e.what());
  }
  {
    std::lock_guard<std::mutex> lock(recv_mutex_);
    for (size_t i = 0; i < abandoned_requests_.size(); ++i) {
      int done = 0;
      MPI_Test(&abandoned_requests_[i], &done, MPI_STATUS_IGNORE);
      if (done) continue;
      MPI_Request_free(&abandoned_requests_[i]);
      new std::vector<uint8_t>(std::move(abandoned_buffers_[i]));  // as for sends below
    }
  }
  std::lock_guard<std::mutex> lock(send_mutex_);
  if (!requests_.empty()) {
    // Expected while an error unwinds the job (a peer stopped receiving): do not add a
    // warning to the error the rank is about to print.
    if (std::uncaught_exceptions() > 0) {
      log_debug("MpiTransport on rank {}: {} sends not completed while unwinding; freeing them",
                rank_, requests_.size());
    } else {
      log_warning("MpiTransport on rank {}: {} sends not completed at destruction; freeing them",
                  rank_, requests_.size());
    }
    for (size_t i = 0; i < requests_.size(); ++i) {
      if (requests_[i] == MPI_REQUEST_NULL) continue;
      MPI_Request_free(&requests_[i]);
      // MPI may still read the buffer after MPI_Request_free: leak it on purpose.
      new std::vector<uint8_t>(std::move(buffers_[i]));
    }
  }
  const int rc = MPI_Comm_free(&comm_);
  if (rc != MPI_SUCCESS) {
    log_warning("MpiTransport on rank {}: MPI_Comm_free: {}", rank_, mpi_error_string(rc));
  }
}

void MpiTransport::send(int dest, int tag, std::vector<uint8_t> data) {
  PARTITA_CHECK(dest >= 0 && dest < size_, CommError,
                "MPI send from rank {}: destination rank {} is not in [0, {})", rank_, dest, size_);
  PARTITA_CHECK(tag >= 0 && tag <= kMaxTag, CommError,
                "MPI send from rank {} to rank {}: tag {} is not in [0, {}]", rank_, dest, tag,
                kMaxTag);
  PARTITA_CHECK(data.size() <= static_cast<size_t>(INT_MAX), CommError,
                "MPI send from rank {} to rank {}: {} bytes is more than one message can hold "
                "({})",
                rank_, dest, data.size(), INT_MAX);
  std::lock_guard<std::mutex> lock(send_mutex_);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(
      MPI_Isend(data.data(), static_cast<int>(data.size()), MPI_BYTE, dest, tag, comm_, &request),
      "MPI_Isend of {} bytes from rank {} to rank {} (tag {})", data.size(), rank_, dest, tag);
  requests_.push_back(request);
  count_sent(dest, data.size());
  buffers_.push_back(std::move(data));
}

std::optional<Message> MpiTransport::poll() {
  std::lock_guard<std::mutex> lock(recv_mutex_);
  int flag = 0;
  MPI_Message handle = MPI_MESSAGE_NULL;
  MPI_Status status;
  check_mpi(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &handle, &status),
            "MPI_Improbe on rank {}", rank_);
  if (!flag) return std::nullopt;
  int count = 0;
  check_mpi(MPI_Get_count(&status, MPI_BYTE, &count),
            "MPI_Get_count of a message from rank {} to rank {}", status.MPI_SOURCE, rank_);
  Message message{status.MPI_SOURCE, status.MPI_TAG, std::vector<uint8_t>(count)};
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Imrecv(message.data.data(), count, MPI_BYTE, &handle, &request),
            "MPI_Imrecv of {} bytes from rank {} on rank {}", count, status.MPI_SOURCE, rank_);
  // Eager messages are complete at the first test; a rendezvous body takes as long as it
  // takes to arrive, which the deadline bounds. Short first sleeps keep a large transfer
  // (which moves on while we test) from being slowed down by the backoff.
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(receive_timeout_s_));
  Backoff backoff(std::chrono::microseconds(1), std::chrono::microseconds(500));
  while (true) {
    int done = 0;
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE),
              "MPI_Test of a {}-byte receive from rank {} on rank {}", count, status.MPI_SOURCE,
              rank_);
    if (done) return message;
    if (Clock::now() >= deadline) {
      abandoned_requests_.push_back(request);
      abandoned_buffers_.push_back(std::move(message.data));
      throw CommError(fmt::format(
          "rank {}: a {}-byte message from rank {} (tag {}) did not finish arriving within {:g} s; "
          "rank {} stalled or died while sending it",
          rank_, count, status.MPI_SOURCE, status.MPI_TAG, receive_timeout_s_, status.MPI_SOURCE));
    }
    std::this_thread::sleep_for(backoff.next());
  }
}

size_t MpiTransport::progress() {
  std::lock_guard<std::mutex> lock(send_mutex_);
  if (requests_.empty()) return 0;
  std::vector<int> done(requests_.size());
  int done_count = 0;
  check_mpi(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &done_count,
                         done.data(), MPI_STATUSES_IGNORE),
            "MPI_Testsome over {} sends from rank {}", requests_.size(), rank_);
  if (done_count == MPI_UNDEFINED || done_count == 0) return requests_.size();
  // Completed requests are now MPI_REQUEST_NULL: compact both arrays.
  size_t kept = 0;
  for (size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) continue;
    if (kept != i) {
      requests_[kept] = requests_[i];
      buffers_[kept] = std::move(buffers_[i]);
    }
    ++kept;
  }
  requests_.resize(kept);
  buffers_.resize(kept);
  return kept;
}

}  // namespace partita
