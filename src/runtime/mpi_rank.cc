#include "partita/runtime/mpi_rank.h"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "partita/comm/mpi_check.h"
#include "partita/runtime/rank_job.h"

namespace partita::runtime {

namespace {

// The trainers' collectives of server-client mode (null on servers and in worker mode):
// over a split of `world` (collective over it) with colour = role, so the trainers keep
// their world order.
std::unique_ptr<MpiCollectives> trainers_of(MpiCollectives& world, const SessionOptions& options) {
  if (options.servers <= 0) return nullptr;
  const bool trainer = role_of(options, world.rank()) == Role::kTrainer;
  MPI_Comm split = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(world.comm(), trainer ? 1 : MPI_UNDEFINED, world.rank(), &split),
            "splitting the trainers from the servers on rank {}", world.rank());
  if (!trainer) return nullptr;
  auto trainers = std::make_unique<MpiCollectives>(split, CollectiveOptions{options.timeout_s});
  check_mpi(MPI_Comm_free(&split), "freeing the trainers' split on rank {}", world.rank());
  return trainers;
}

// Agreement on a usage error (rank_job.h): flag checks give the same verdict on every rank,
// so each rank that raised one asks whether every rank did. Built before the body runs
// (collective: a communicator of its own, on which no other traffic can match).
class UsageAgreement {
 public:
  // Waits at most kStartupSeconds for every rank.
  explicit UsageAgreement(MpiScope& mpi) {
    int rank = 0, size = 1;
    comm_ = dup_communicator(mpi.world(), kStartupSeconds, "starting the job", &rank, &size);
  }
  static constexpr double kStartupSeconds = 120;
  ~UsageAgreement() {  // frees the communicator unless an agreement was left pending
    if (comm_ != MPI_COMM_NULL && !pending_) MPI_Comm_free(&comm_);
  }
  UsageAgreement(const UsageAgreement&) = delete;
  UsageAgreement& operator=(const UsageAgreement&) = delete;

  // Whether every rank joined within `seconds`. On false the request stays pending: the
  // caller aborts the job.
  bool all_ranks_raise(double seconds) {
    MPI_Request request = MPI_REQUEST_NULL;
    pending_ = true;
    if (MPI_Iallreduce(&mine_, &lowest_, 1, MPI_INT, MPI_MIN, comm_, &request) != MPI_SUCCESS)
      return false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (true) {
      int done = 0;
      if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
      if (done) {
        pending_ = false;
        return true;
      }
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool pending_ = false;
  int mine_ = 0;  // the pending agreement's buffers: MPI may write them until the abort
  int lowest_ = 0;
};

// The processes of an MPI job (rank_job.h's JobWorld). Declare it after the MpiScope.
class MpiJob final : public JobWorld {
 public:
  explicit MpiJob(MpiScope& mpi) : mpi_(mpi) {
    if (mpi.size() > 1) agreement_.emplace(mpi);
  }
  int rank() const override { return mpi_.rank(); }
  int size() const override { return mpi_.size(); }
  int cores_per_rank() const override { return mpi_.cores_per_rank(); }
  int local_rank() const override { return mpi_.local_rank(); }
  int local_size() const override { return mpi_.local_size(); }
  Links connect(const SessionOptions& options) override {
    PARTITA_CHECK(links_ == nullptr, Error, "internal: rank {} connected twice", mpi_.rank());
    links_ = std::make_unique<MpiLinks>(mpi_, options);
    return {links_->transport, links_->collectives, links_->trainers.get()};
  }
  bool all_ranks_raise(double seconds) override {
    return !agreement_ || agreement_->all_ranks_raise(seconds);
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(mpi_.world(), code);
    std::_Exit(code);  // MPI_Abort does not return; if it ever does, neither do we
  }

 private:
  MpiScope& mpi_;
  std::optional<UsageAgreement> agreement_;
  std::unique_ptr<MpiLinks> links_;
};

}  // namespace

MpiLinks::MpiLinks(MpiScope& mpi, const SessionOptions& options)
    : collectives(mpi.world(), CollectiveOptions{options.timeout_s}),
      transport(mpi.world(), options.timeout_s),
      trainers(trainers_of(collectives, options)) {}

MpiLinks::~MpiLinks() = default;

MpiRank::MpiRank(MpiScope& mpi, const SessionOptions& options)
    : links_(mpi, options),
      session_(std::make_unique<Session>(links_.transport, links_.collectives, options,
                                         links_.trainers.get())) {}

MpiRank::~MpiRank() = default;

int run_mpi_ranks(const RankBody& body, const ReportFailure& report) {
  MpiScope mpi(nullptr, nullptr);
  MpiJob job(mpi);
  return run_ranks(job, body, report);
}

}  // namespace partita::runtime
