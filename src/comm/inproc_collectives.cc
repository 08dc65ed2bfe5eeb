#include "partita/comm/inproc_collectives.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "partita/comm/errors.h"

namespace partita {
namespace {

using Contributions = std::vector<std::vector<uint8_t>>;

template <class T>
void reduce_typed(const Contributions& all, size_t offset, size_t count, ReduceOp op, T* out) {
  for (size_t i = 0; i < count; ++i) {
    T acc;
    std::memcpy(&acc, all[0].data() + offset + i * sizeof(T), sizeof(T));
    for (size_t r = 1; r < all.size(); ++r) {
      T v;
      std::memcpy(&v, all[r].data() + offset + i * sizeof(T), sizeof(T));
      acc = op == ReduceOp::kSum   ? acc + v
            : op == ReduceOp::kMin ? std::min(acc, v)
                                   : std::max(acc, v);
    }
    out[i] = acc;
  }
}

}  // namespace

// Shared state of one group: contributions of the exchange in progress, and the last
// published exchange (kept alive by the members still reading it).
struct InProcessCollectiveGroup::Meeting {
  explicit Meeting(int size, double timeout)
      : pending(static_cast<size_t>(size)), timeout_s(timeout) {}

  // Deposits `mine` for `rank` and returns everyone's contributions to this exchange.
  // `what` names the operation in errors.
  std::shared_ptr<const Contributions> exchange(int rank, std::vector<uint8_t> mine,
                                                const char* what,
                                                const std::function<std::string()>& diagnose) {
    std::unique_lock<std::mutex> lock(mutex);
    PARTITA_CHECK(!broken, CommError, "{} on rank {}: an earlier collective of this group failed",
                  what, rank);
    pending[static_cast<size_t>(rank)] = std::move(mine);
    const uint64_t my_generation = generation;
    if (++arrived == pending.size()) {
      published = std::make_shared<const Contributions>(std::move(pending));
      pending = Contributions(published->size());
      arrived = 0;
      ++generation;
      cv.notify_all();
      return published;
    }
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout_s));
    if (!cv.wait_until(lock, deadline, [&] { return broken || generation != my_generation; })) {
      broken = true;
      cv.notify_all();
      lock.unlock();
      throw TimeoutError(fmt::format("{} on rank {}: not every rank of {} joined within {:g} s",
                                     what, rank, pending.size(), timeout_s) +
                         (diagnose ? diagnose() : std::string()));
    }
    PARTITA_CHECK(generation != my_generation, CommError,
                  "{} on rank {}: another rank's collective of this group failed", what, rank);
    return published;
  }

  std::mutex mutex;
  std::condition_variable cv;
  Contributions pending;
  size_t arrived = 0;
  uint64_t generation = 0;
  std::shared_ptr<const Contributions> published;
  bool broken = false;
  double timeout_s;
};

class InProcessCollectiveGroup::Member : public Collectives {
 public:
  Member(Meeting* meeting, int rank, int size) : meeting_(meeting), rank_(rank), size_(size) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void barrier() override { exchange({}, "barrier"); }

 protected:
  void reduce(void* data, size_t count, size_t /*bucket_count*/, ElemType type,
              ReduceOp op) override {
    const size_t bytes = count * elem_size(type);
    std::vector<uint8_t> mine(bytes);
    if (bytes > 0) std::memcpy(mine.data(), data, bytes);
    const auto all = exchange(std::move(mine), "allreduce");
    for (const auto& c : *all)
      PARTITA_CHECK(c.size() == bytes, CommError,
                    "allreduce on rank {}: ranks reduce different counts ({} vs {} bytes)", rank_,
                    c.size(), bytes);
    switch (type) {
      case ElemType::kInt32:
        return reduce_typed(*all, 0, count, op, static_cast<int32_t*>(data));
      case ElemType::kInt64:
        return reduce_typed(*all, 0, count, op, static_cast<int64_t*>(data));
      case ElemType::kUint64:
        return reduce_typed(*all, 0, count, op, static_cast<uint64_t*>(data));
      case ElemType::kFloat32:
        return reduce_typed(*all, 0, count, op, static_cast<float*>(data));
      case ElemType::kFloat64:
        return reduce_typed(*all, 0, count, op, static_cast<double*>(data));
    }
  }

  void broadcast_bytes(void* data, size_t bytes, int root) override {
    PARTITA_CHECK(root >= 0 && root < size_, CommError,
                  "broadcast on rank {}: root {} out of [0, {})", rank_, root, size_);
    std::vector<uint8_t> mine;
    if (rank_ == root)
      mine.assign(static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + bytes);
    const auto all = exchange(std::move(mine), "broadcast");
    const std::vector<uint8_t>& from = (*all)[static_cast<size_t>(root)];
    PARTITA_CHECK(from.size() == bytes, CommError,
                  "broadcast on rank {}: root sent {} bytes, this rank expects {}", rank_,
                  from.size(), bytes);
    if (bytes > 0) std::memcpy(data, from.data(), bytes);
  }

  std::vector<uint8_t> allgather_bytes(const void* mine, size_t bytes) override {
    std::vector<uint8_t> own(static_cast<const uint8_t*>(mine),
                             static_cast<const uint8_t*>(mine) + bytes);
    const auto all = exchange(std::move(own), "allgather");
    std::vector<uint8_t> out;
    for (const auto& c : *all) out.insert(out.end(), c.begin(), c.end());
    return out;
  }

 private:
  std::shared_ptr<const Contributions> exchange(std::vector<uint8_t> mine, const char* what) {
    return meeting_->exchange(rank_, std::move(mine), what, [this] { return diagnose_timeout(); });
  }

  Meeting* meeting_;
  int rank_;
  int size_;
};

InProcessCollectiveGroup::InProcessCollectiveGroup(int size, double timeout_s) {
  PARTITA_CHECK(size >= 1, CommError, "InProcessCollectiveGroup: size {} must be at least 1", size);
  PARTITA_CHECK(timeout_s > 0, CommError, "InProcessCollectiveGroup: timeout {} s must be positive",
                timeout_s);
  meeting_ = std::make_unique<Meeting>(size, timeout_s);
  for (int r = 0; r < size; ++r)
    members_.push_back(std::make_unique<Member>(meeting_.get(), r, size));
}

InProcessCollectiveGroup::~InProcessCollectiveGroup() = default;

Collectives& InProcessCollectiveGroup::member(int rank) {
  PARTITA_CHECK(rank >= 0 && rank < size(), CommError,
                "InProcessCollectiveGroup: rank {} is not in [0, {})", rank, size());
  return *members_[static_cast<size_t>(rank)];
}

}  // namespace partita
