#pragma once
// Collectives of the ranks of one job, with a deadline (DESIGN decisions 7 and 11): the
// interface the trainer and the runtime are written against. Backends: MpiCollectives
// (mpi_collectives.h, real runs) and InProcessCollectives (inproc_collectives.h, threads as
// ranks, for tests).
//
// Contract shared by every backend:
// - Every rank calls the same operations in the same order, one thread at a time per
//   object; counts agree where an operation says so.
// - A rank that waits longer than the backend's timeout for its peers throws TimeoutError
//   (with the text of the timeout diagnosis appended); the object is then unusable (later
//   calls throw CommError) and the job is expected to fail.
// - Results are written into the caller's buffers only on success.
// - Reductions of floating-point values give the same bits on every rank.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace partita {

enum class ReduceOp { kSum, kMin, kMax };

// Element types a reduction understands.
enum class ElemType { kInt32, kInt64, kUint64, kFloat32, kFloat64 };

template <class T>
constexpr ElemType elem_type_of() {
  using U = std::remove_cv_t<T>;
  static_assert(std::is_arithmetic_v<U> && !std::is_same_v<U, bool>,
                "Collectives: reductions take int32, int64, uint64, float or double");
  if constexpr (std::is_floating_point_v<U>) {
    static_assert(sizeof(U) == 4 || sizeof(U) == 8, "Collectives: float or double");
    return sizeof(U) == 4 ? ElemType::kFloat32 : ElemType::kFloat64;
  } else {
    static_assert(sizeof(U) == 4 || sizeof(U) == 8, "Collectives: 32- or 64-bit integers");
    if constexpr (sizeof(U) == 4) {
      static_assert(std::is_signed_v<U>, "Collectives: no unsigned 32-bit reductions");
      return ElemType::kInt32;
    } else {
      return std::is_signed_v<U> ? ElemType::kInt64 : ElemType::kUint64;
    }
  }
}

size_t elem_size(ElemType type);

class Collectives {
 public:
  virtual ~Collectives() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Called when a collective times out, from the thread that waited; its text is appended
  // to the TimeoutError's message. A collective cannot tell which peer is missing, so this
  // is where a caller names it (e.g. by pinging every rank, RpcEndpoint::unresponsive_ranks).
  // Exceptions it throws are reported in the text. Set it before the first collective.
  void set_timeout_diagnosis(std::function<std::string()> diagnose) {
    diagnose_ = std::move(diagnose);
  }

  virtual void barrier() = 0;

  // Bytes this rank has contributed to collectives so far (reductions, broadcasts from it,
  // gathers): the payload; what travels depends on the backend's algorithm.
  uint64_t bytes_contributed() const { return bytes_; }

  // In place: data[i] = op over all ranks of data[i]. count must fit an int.
  template <class T>
  void allreduce(T* data, size_t count, ReduceOp op = ReduceOp::kSum) {
    reduce(data, count, 0, elem_type_of<T>(), op);
    bytes_ += count * sizeof(T);
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
  // at once, so that no call exceeds an int count and the backend can pipeline them.
  // bucket_count >= 1.
  template <class T>
  void allreduce_bucketed(T* data, size_t count, size_t bucket_count,
                          ReduceOp op = ReduceOp::kSum) {
    reduce(data, count, bucket_count, elem_type_of<T>(), op);
    bytes_ += count * sizeof(T);
  }

  // In place: data[0, count) of rank `root` on every rank. count must be the same on every
  // rank and its bytes fit an int.
  template <class T>
  void broadcast(T* data, size_t count, int root) {
    static_assert(std::is_trivially_copyable_v<T>, "broadcast: trivially copyable values");
    broadcast_bytes(data, count * sizeof(T), root);
    if (root == rank()) bytes_ += count * sizeof(T);
  }

  // The concatenation of every rank's `mine`, in rank order, on every rank. Sizes may
  // differ between ranks; the total bytes must fit an int.
  template <class T>
  std::vector<T> allgather(const std::vector<T>& mine) {
    static_assert(std::is_trivially_copyable_v<T>, "allgather: trivially copyable values");
    std::vector<uint8_t> bytes = allgather_bytes(mine.data(), mine.size() * sizeof(T));
    bytes_ += mine.size() * sizeof(T);
    std::vector<T> all(bytes.size() / sizeof(T));
    if (!all.empty()) std::memcpy(all.data(), bytes.data(), bytes.size());
    return all;
  }

 protected:
  // bucket_count 0: one bucket of all count values.
  virtual void reduce(void* data, size_t count, size_t bucket_count, ElemType type,
                      ReduceOp op) = 0;
  virtual void broadcast_bytes(void* data, size_t bytes, int root) = 0;
  virtual std::vector<uint8_t> allgather_bytes(const void* mine, size_t bytes) = 0;

  // The diagnosis text for a timeout ("" when none is set): "; <text>".
  std::string diagnose_timeout() const;

 private:
  std::function<std::string()> diagnose_;
  uint64_t bytes_ = 0;
};

}  // namespace partita
