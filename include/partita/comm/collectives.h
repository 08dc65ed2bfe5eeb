#pragma once
// Collectives with a deadline on a communicator of their own (an MPI_Comm_dup of the one
// given, with MPI_ERRORS_RETURN), for training (DESIGN decisions 5 and 7).
//
// Each operation starts the non-blocking MPI collective (MPI_Ibarrier, MPI_Iallreduce,
// MPI_Ibcast) and
// polls it with MPI_Test, sleeping with a growing backoff between tests, so a rank waiting
// for a late peer does not burn a core (decision 9). Past options.timeout_s it throws
// TimeoutError (decision 11). A pending MPI collective cannot be cancelled, so the request,
// its internal buffer and the communicator are then abandoned (never freed: Open MPI may
// still progress the collective), and later operations on this object throw CommError; the
// job is expected to fail. The caller's data is only written on success.
//
// Like any MPI collective: every rank calls the same operations in the same order, from one
// thread at a time per object. The constructor is collective over `comm` (MPI_Comm_dup).
#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "partita/comm/mpi_type.h"

namespace partita {

struct CollectiveOptions {
  double timeout_s = 60.0;
  // Backoff between MPI_Test calls (see RpcOptions): a collective that has waited t for
  // its peers adds about t/9, at most max_sleep, once they arrive.
  std::chrono::microseconds min_sleep{10};
  std::chrono::microseconds max_sleep{1000};
  double sleep_growth = 1.125;
};

enum class ReduceOp { kSum, kMin, kMax };

class Collectives {
 public:
  explicit Collectives(MPI_Comm comm, CollectiveOptions options = {});
  ~Collectives();  // MPI_Comm_free unless a collective timed out; never throws
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }

  // Called when a collective times out, from the thread that waited; its text is appended
  // to the TimeoutError's message. A collective cannot tell which peer is missing, so this
  // is where a caller names it (e.g. by pinging every rank, RpcEndpoint::unresponsive_ranks).
  // Exceptions it throws are reported in the text. Set it before the first collective.
  void set_timeout_diagnosis(std::function<std::string()> diagnose) {
    diagnose_ = std::move(diagnose);
  }

  void barrier();

  // In place: data[i] = op over all ranks of data[i]. count must fit an int.
  template <class T>
  void allreduce(T* data, size_t count, ReduceOp op = ReduceOp::kSum) {
    allreduce_bytes(data, count, sizeof(T), mpi_type<T>(), op);
  }
  template <class T>
  void allreduce_sum(std::vector<T>& values) {
    allreduce(values.data(), values.size(), ReduceOp::kSum);
  }
  // One value, returned.
  template <class T>
  T allreduce_one(T value, ReduceOp op) {
    allreduce(&value, 1, op);
    return value;
  }

  // As allreduce, over consecutive buckets of at most bucket_count values, all in flight
  // at once (one MPI_Iallreduce each), so that no call exceeds an int count and the MPI
  // library can pipeline them. bucket_count >= 1.
  template <class T>
  void allreduce_bucketed(T* data, size_t count, size_t bucket_count,
                          ReduceOp op = ReduceOp::kSum) {
    reduce_buckets(data, count, bucket_count, sizeof(T), mpi_type<T>(), op);
  }

  // In place: data[0, count) of rank `root` on every rank. count must fit an int and be
  // the same on every rank.
  template <class T>
  void broadcast(T* data, size_t count, int root) {
    broadcast_bytes(data, count, sizeof(T), mpi_type<T>(), root);
  }

 private:
  void allreduce_bytes(void* data, size_t count, size_t elem_size, MPI_Datatype type, ReduceOp op);
  void reduce_buckets(void* data, size_t count, size_t bucket_count, size_t elem_size,
                      MPI_Datatype type, ReduceOp op);
  void broadcast_bytes(void* data, size_t count, size_t elem_size, MPI_Datatype type, int root);
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
  std::function<std::string()> diagnose_;
};

}  // namespace partita
