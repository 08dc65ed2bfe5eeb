#include "partita/runtime/mpi_rank.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "partita/comm/mpi_check.h"

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

}  // namespace

MpiRank::MpiRank(MpiScope& mpi, const SessionOptions& options)
    : collectives_(mpi.world(), CollectiveOptions{options.timeout_s}),
      transport_(mpi.world(), options.timeout_s),
      trainers_(trainers_of(collectives_, options)),
      session_(std::make_unique<Session>(transport_, collectives_, options, trainers_.get())) {}

MpiRank::~MpiRank() = default;

UsageAgreement::UsageAgreement(MpiScope& mpi) : mpi_(mpi) {
  int rank = 0, size = 1;
  if (mpi.size() > 1)
    comm_ = dup_communicator(mpi.world(), kStartupSeconds, "starting the job", &rank, &size);
}

UsageAgreement::~UsageAgreement() {
  if (comm_ != MPI_COMM_NULL && !pending_) MPI_Comm_free(&comm_);
}

bool UsageAgreement::all_ranks_raise(double seconds, int* lowest) {
  *lowest = mpi_.rank();
  if (comm_ == MPI_COMM_NULL) return true;
  mine_ = mpi_.rank();
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
      *lowest = lowest_;
      return true;
    }
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void abort_job(MpiScope& mpi, int code) {
  MPI_Abort(mpi.world(), code);
  std::_Exit(code);  // MPI_Abort does not return; if it ever does, neither do we
}

}  // namespace partita::runtime
