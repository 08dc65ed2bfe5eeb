#pragma once
// Collectives (collectives.h) over MPI, on a communicator of their own (an MPI_Comm_dup of
// the one given, with MPI_ERRORS_RETURN), for training (DESIGN decisions 5 and 7).
//
// Each operation starts the non-blocking MPI collective (MPI_Ibarrier, MPI_Iallreduce,
// MPI_Ibcast, MPI_Iallgather(v)) and polls it with MPI_Test, sleeping with a growing
// backoff between tests, so a rank waiting for a late peer does not burn a core (decision
// 9). Past options.timeout_s it throws TimeoutError (decision 11). A pending MPI collective
// cannot be cancelled, so the request, its internal buffer and the communicator are then
// abandoned (never freed: Open MPI may still progress the collective), and later operations
// on this object throw CommError.
//
// The constructor is collective over `comm` (dup_communicator in mpi_check.h, with
// options.timeout_s).
#include <mpi.h>

#include <chrono>
#include <vector>

#include "partita/comm/collectives.h"

namespace partita {

struct CollectiveOptions {
  double timeout_s = 60.0;
  // Backoff between MPI_Test calls (see RpcOptions): a collective that has waited t for
  // its peers adds about t/9, at most max_sleep, once they arrive.
  std::chrono::microseconds min_sleep{10};
  std::chrono::microseconds max_sleep{1000};
  double sleep_growth = 1.125;
};

class MpiCollectives : public Collectives {
 public:
  explicit MpiCollectives(MPI_Comm comm, CollectiveOptions options = {});
  ~MpiCollectives() override;  // MPI_Comm_free unless a collective timed out; never throws
  MpiCollectives(const MpiCollectives&) = delete;
  MpiCollectives& operator=(const MpiCollectives&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  MPI_Comm comm() const { return comm_; }

  void barrier() override;

 protected:
  void reduce(void* data, size_t count, size_t bucket_count, ElemType type, ReduceOp op) override;
  void broadcast_bytes(void* data, size_t bytes, int root) override;
  std::vector<uint8_t> allgather_bytes(const void* mine, size_t bytes) override;

 private:
  // Tests `request` with backoff until done or the deadline; `what` names the operation.
  void wait(MPI_Request* request, const char* what, size_t count);
  // As wait, for every request of `requests` (MPI_Testall).
  void wait_all(std::vector<MPI_Request>& requests, const char* what, size_t count);
  void check_usable(const char* what) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  CollectiveOptions options_;
  bool abandoned_ = false;  // a collective timed out: comm_ still has a pending operation
};

}  // namespace partita
