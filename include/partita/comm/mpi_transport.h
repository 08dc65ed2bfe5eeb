#pragma once
// Transport over MPI point-to-point on a communicator of its own (an MPI_Comm_dup of the
// one given, with MPI_ERRORS_RETURN), so its traffic never matches anyone else's receives.
// Receives with MPI_Improbe + MPI_Mrecv (any source, any tag); sends with MPI_Isend, whose
// request and buffer are kept until MPI_Test (in progress()) reports completion.
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
  explicit MpiTransport(MPI_Comm comm);
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
  std::mutex send_mutex_;
  // Parallel arrays: requests_[i] sends buffers_[i]. A moved vector keeps its heap buffer,
  // so growing buffers_ does not move the bytes MPI is reading.
  std::vector<MPI_Request> requests_;
  std::vector<std::vector<uint8_t>> buffers_;
};

}  // namespace partita
