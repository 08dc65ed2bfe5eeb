#pragma once
// Transport over MPI point-to-point on a communicator of its own (an MPI_Comm_dup of the
// one given, with MPI_ERRORS_RETURN), so its traffic never matches anyone else's receives.
// Sends with MPI_Isend, whose request and buffer are kept until MPI_Test (in progress())
// reports completion.
//
// Receives with MPI_Improbe (any source, any tag), then MPI_Imrecv + MPI_Test. A successful
// probe does not mean the data is here: past the eager limit (64 KiB over TCP in Open MPI)
// the probe matches only the rendezvous header, and the body moves only while the sender's
// MPI makes progress, so a blocking MPI_Mrecv could wait forever on a stalled or dead
// sender. poll() therefore waits for the body of a message it has matched (testing, and
// sleeping with a backoff between tests: no spinning, DESIGN decision 9) for at most
// receive_timeout_s, then throws CommError naming the sender and the size. Returning at once
// instead would need the body to be resumed by a later poll(); waiting keeps it simple and
// only happens while a message is really arriving.
//
// Construction and destruction: the constructor is collective over `comm` (MPI_Comm_dup)
// and blocks until every rank of `comm` constructs one. The destructor never blocks long:
// it tests outstanding sends for up to 100 ms, then frees the ones left (their buffers are
// deliberately leaked, since MPI may still read them) and logs a warning.
// Requires MPI_THREAD_MULTIPLE (see MpiScope). Thread-safety as in transport.h.
#include <mpi.h>

#include <mutex>

#include "partita/comm/transport.h"

namespace partita {

class MpiTransport : public Transport {
 public:
  // Longest wait for the body of a matched message (see above), in seconds.
  static constexpr double kDefaultReceiveTimeoutS = 60.0;

  explicit MpiTransport(MPI_Comm comm, double receive_timeout_s = kDefaultReceiveTimeoutS);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int dest, int tag, std::vector<uint8_t> data) override;
  std::optional<Message> poll() override;
  size_t progress() override;

  // The private communicator, e.g. for diagnostics. Owned by this object.
  MPI_Comm comm() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  double receive_timeout_s_;
  std::mutex recv_mutex_;  // one poll() at a time receives
  // Receives given up at their deadline (guarded by recv_mutex_): MPI may still write
  // into the buffers, so they are kept until the destructor frees the requests.
  std::vector<MPI_Request> abandoned_requests_;
  std::vector<std::vector<uint8_t>> abandoned_buffers_;
  std::mutex send_mutex_;
  // Parallel arrays: requests_[i] sends buffers_[i]. A moved vector keeps its heap buffer,
  // so growing buffers_ does not move the bytes MPI is reading.
  std::vector<MPI_Request> requests_;
  std::vector<std::vector<uint8_t>> buffers_;
};

}  // namespace partita
