#pragma once
// runtime::JobWorld over threads: InProcessJob(n) holds n ranks over the in-process transport
// and collectives (comm/inproc_*.h), so run_ranks runs a whole job in one test process.
// JobWorld::abort throws JobAborted (the thread ends; a real job would end every rank).
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "partita/comm/errors.h"
#include "partita/comm/inproc_collectives.h"
#include "partita/comm/inproc_transport.h"
#include "partita/runtime/rank_job.h"

namespace partita::testing {

struct JobAborted : std::runtime_error {
  explicit JobAborted(int code) : std::runtime_error("job aborted"), code(code) {}
  int code;
};

class InProcessJob {
 public:
  // `servers` > 0: the trainers (ranks servers..n-1) get collectives of their own.
  // Collective waits (set-up, usage agreement) give up after `timeout_s`.
  explicit InProcessJob(int size, int servers = 0, double timeout_s = 10)
      : transports_(size), world_(size, timeout_s), agreement_(size, timeout_s) {
    if (servers > 0 && servers < size)
      trainers_ = std::make_unique<InProcessCollectiveGroup>(size - servers, timeout_s);
    for (int r = 0; r < size; ++r) ranks_.push_back(std::make_unique<Rank>(*this, r, servers));
  }
  int size() const { return static_cast<int>(ranks_.size()); }
  runtime::JobWorld& rank(int r) { return *ranks_[static_cast<size_t>(r)]; }

 private:
  class Rank final : public runtime::JobWorld {
   public:
    Rank(InProcessJob& job, int rank, int servers) : job_(job), rank_(rank), servers_(servers) {}
    int rank() const override { return rank_; }
    int size() const override { return job_.size(); }
    int cores_per_rank() const override { return 1; }
    Links connect(const runtime::SessionOptions&) override {
      Collectives* trainers = nullptr;
      if (job_.trainers_ && rank_ >= servers_) trainers = &job_.trainers_->member(rank_ - servers_);
      return {job_.transports_.transport(rank_), job_.world_.member(rank_), trainers};
    }
    bool all_ranks_raise(double) override {
      try {
        job_.agreement_.member(rank_).barrier();
        return true;
      } catch (const Error&) {  // TimeoutError, or CommError once the group broke
        return false;
      }
    }
    [[noreturn]] void abort(int code) override { throw JobAborted(code); }

   private:
    InProcessJob& job_;
    int rank_;
    int servers_;
  };

  InProcessWorld transports_;
  InProcessCollectiveGroup world_;
  InProcessCollectiveGroup agreement_;
  std::unique_ptr<InProcessCollectiveGroup> trainers_;
  std::vector<std::unique_ptr<Rank>> ranks_;
};

}  // namespace partita::testing
