#include "partita/loader/dist_session.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <new>
#include <thread>

#include "partita/comm/mpi_check.h"
#include "partita/core/error.h"

namespace partita::loader {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int exit_code_of(const std::exception& e) {
  return dynamic_cast<const UsageError*>(&e) != nullptr ? kExitUsage : kExitFailure;
}

// The message main() would print for `e`.
std::string message_of(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return "out of memory";
  if (dynamic_cast<const Error*>(&e) != nullptr) return e.what();
  const std::string what = e.what();  // first line: torch's errors carry a backtrace
  return "internal: " + what.substr(0, what.find('\n'));
}

void print_error(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::fflush(stderr);
}

// Maps this rank's part, then agrees with every other rank on whether any failed: one
// allreduce of (lowest failing rank and its exit code, whether every rank failed). Alone,
// an error propagates as it is.
store::DistGraph open_agreed(MpiScope& mpi, const DistSessionOptions& options) {
  store::DistGraph graph;
  std::string message;
  int code = 0;
  try {
    graph = store::DistGraph::open(options.parts_dir, mpi.rank(), mpi.size(), options.graph);
  } catch (const std::exception& e) {
    if (mpi.size() == 1) throw;
    message = message_of(e);
    code = exit_code_of(e);
  }
  if (mpi.size() == 1) return graph;
  // [0]: rank * 4 + code of a failing rank, INT_MAX if none; [1]: 1 if this rank failed.
  const int local[2] = {code != 0 ? mpi.rank() * 4 + code : INT_MAX, code != 0 ? 1 : 0};
  int global[2] = {INT_MAX, 0};
  check_mpi(MPI_Allreduce(local, global, 2, MPI_INT, MPI_MIN, mpi.world()),
            "rank {}: MPI_Allreduce agreeing on the opening of {}", mpi.rank(),
            options.parts_dir);
  if (global[0] == INT_MAX) return graph;
  const int lowest = global[0] / 4;
  throw SetupError(mpi.rank() == lowest ? message : std::string(), global[0] % 4,
                   mpi.rank() == lowest, global[1] == 1);
}

// Whether every rank of `comm` joins this agreement within kUsageAgreementSeconds (each
// rank that raised a UsageError joins it); *lowest is then the lowest rank. On false the
// request stays pending: the caller aborts the job.
bool all_ranks_agree(MPI_Comm comm, const int* mine, int* lowest) {
  MPI_Request request = MPI_REQUEST_NULL;
  if (MPI_Iallreduce(mine, lowest, 1, MPI_INT, MPI_MIN, comm, &request) != MPI_SUCCESS)
    return false;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(kUsageAgreementSeconds);
  while (true) {
    int done = 0;
    if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
    if (done) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// For a collective that timed out (it cannot say who is missing): pings every other rank's
// request service for a bounded time and names the ones that do not answer.
std::string describe_unresponsive(RpcEndpoint& endpoint, double timeout_s) {
  const double probe_s = std::min(10.0, std::max(1.0, timeout_s / 2));
  const std::vector<int> silent = endpoint.unresponsive_ranks(probe_s);
  if (silent.empty())
    return "every other rank still answers requests (one is slow or stuck elsewhere)";
  return fmt::format("rank{} {} did not answer a ping within {:g} s (stopped, dead or cut off)",
                     silent.size() == 1 ? "" : "s", fmt::join(silent, ", "), probe_s);
}

}  // namespace

DistSession::DistSession(MpiScope& mpi, const DistSessionOptions& options)
    : mpi_(mpi),
      graph_(open_agreed(mpi, options)),
      transport_(mpi.world()),
      collectives_(mpi.world(), CollectiveOptions{options.timeout_s}) {
  RpcRouter router;
  store::add_feature_routes(router, graph_);
  sample::add_sample_routes(router, graph_, options.sampling);
  RpcOptions rpc;
  rpc.timeout_s = options.timeout_s;
  // Every rank has its routes before any rank may send it a request.
  collectives_.barrier();
  endpoint_ = std::make_unique<RpcEndpoint>(transport_, router.handler(), rpc);
  collectives_.set_timeout_diagnosis(
      [endpoint = endpoint_.get(), timeout = options.timeout_s] {
        return describe_unresponsive(*endpoint, timeout);
      });
  RpcEndpoint* remote = graph_.meta().num_parts > 1 ? endpoint_.get() : nullptr;
  fetcher_ = std::make_unique<store::FeatureFetcher>(graph_, remote);
  sampler_ = std::make_unique<sample::DistSampler>(graph_, remote, options.sampling);
}

DistSession::~DistSession() = default;

void DistSession::finish() { endpoint_->shutdown(); }

int run_rank(MpiScope& mpi, const std::function<int()>& body) {
  if (mpi.size() == 1) return body();
  // A communicator of its own for the usage-error agreement: no other traffic can match it.
  MPI_Comm agree = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(mpi.world(), &agree), "rank {}: MPI_Comm_dup of MPI_COMM_WORLD",
            mpi.rank());
  int code = 0;
  try {
    code = body();
  } catch (const SetupError& e) {
    if (e.report())
      print_error(e.all_failed() ? e.what() : fmt::format("rank {}: {}", mpi.rank(), e.what()));
    code = e.exit_code();
  } catch (const UsageError& e) {
    const int mine = mpi.rank();
    int lowest = mine;
    if (!all_ranks_agree(agree, &mine, &lowest)) {
      print_error(fmt::format("rank {}: {}", mpi.rank(), e.what()));
      MPI_Abort(mpi.world(), kExitUsage);
      throw;
    }
    if (lowest == mpi.rank()) print_error(e.what());
    code = kExitUsage;
  } catch (const std::exception& e) {
    print_error(fmt::format("rank {}: {}", mpi.rank(), message_of(e)));
    MPI_Abort(mpi.world(), exit_code_of(e));
    throw;
  }
  MPI_Comm_free(&agree);
  return code;
}

}  // namespace partita::loader
