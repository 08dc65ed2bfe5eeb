#pragma once
// A point-to-point byte transport between the ranks of one job: the small interface the
// request/response layer (rpc.h) is written against. Backends: MpiTransport (real runs) and
// InProcessWorld (threads as ranks, for tests).
//
// Contract shared by every backend:
// - Nothing blocks: send() queues and returns, poll() returns at once with or without a
//   message, progress() only tests outstanding sends.
// - send() takes ownership of the buffer; the backend keeps it alive until delivered.
// - Messages from one sender to one receiver arrive in the order they were sent (FIFO per
//   pair, whatever the tags); messages are never split, merged or dropped.
// - All methods are thread-safe. poll() is meant for one thread (the rank's service thread);
//   concurrent pollers each get distinct messages.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace partita {

struct Message {
  int source = -1;  // sender's rank
  int tag = 0;
  std::vector<uint8_t> data;
};

class Transport {
 public:
  // Tags are in [0, kMaxTag] (the smallest MPI_TAG_UB the MPI standard allows).
  static constexpr int kMaxTag = 32767;

  virtual ~Transport() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Queues `data` for rank `dest` (which may be this rank). Throws CommError on a bad rank
  // or tag, a message over 2^31-1 bytes, or a backend failure.
  virtual void send(int dest, int tag, std::vector<uint8_t> data) = 0;

  // The next message that has arrived for this rank, if any.
  virtual std::optional<Message> poll() = 0;

  // Releases the sends that have completed; returns how many are still in flight.
  virtual size_t progress() = 0;

  // Bytes this rank has queued for other ranks (not for itself) so far: the network
  // traffic of its requests and replies. Thread-safe.
  uint64_t bytes_sent() const { return bytes_sent_.load(std::memory_order_relaxed); }

 protected:
  // Backends call this from send().
  void count_sent(int dest, size_t bytes) {
    if (dest != rank()) bytes_sent_.fetch_add(bytes, std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> bytes_sent_{0};
};

}  // namespace partita
