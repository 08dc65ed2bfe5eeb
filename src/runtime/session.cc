#include "partita/runtime/session.h"

#include <algorithm>
#include <climits>
#include <new>

#include "partita/comm/rpc.h"
#include "partita/comm/transport.h"

namespace partita::runtime {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

// Maps this rank's part, then agrees with every other rank on whether any failed: one
// allreduce of (lowest failing rank and its exit code, whether every rank failed). Alone,
// an error propagates as it is.
store::DistGraph open_agreed(Collectives& coll, const SessionOptions& options) {
  store::DistGraph graph;
  std::string message;
  int code = 0;
  try {
    graph = store::DistGraph::open(options.parts_dir, coll.rank(), coll.size(), options.graph);
  } catch (const std::exception& e) {
    if (coll.size() == 1) throw;
    message = message_of(e);
    code = exit_code_of(e);
  }
  if (coll.size() == 1) return graph;
  // [0]: rank * 4 + code of a failing rank, INT_MAX if none; [1]: 1 if this rank failed.
  int32_t agreed[2] = {code != 0 ? coll.rank() * 4 + code : INT_MAX, code != 0 ? 1 : 0};
  coll.allreduce(agreed, 2, ReduceOp::kMin);
  if (agreed[0] == INT_MAX) return graph;
  const int lowest = agreed[0] / 4;
  throw SetupError(coll.rank() == lowest ? message : std::string(), agreed[0] % 4,
                   coll.rank() == lowest, agreed[1] == 1);
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

int exit_code_of(const std::exception& e) {
  if (const auto* setup = dynamic_cast<const SetupError*>(&e)) return setup->exit_code();
  return dynamic_cast<const UsageError*>(&e) != nullptr ? kExitUsage : kExitFailure;
}

std::string message_of(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return "out of memory";
  if (dynamic_cast<const Error*>(&e) != nullptr) return e.what();
  const std::string what = e.what();  // first line: torch's errors carry a backtrace
  return "internal: " + what.substr(0, what.find('\n'));
}

Session::Session(Transport& transport, Collectives& collectives, const SessionOptions& options)
    : transport_(transport), collectives_(collectives), graph_(open_agreed(collectives, options)) {
  PARTITA_CHECK(transport.rank() == collectives.rank() && transport.size() == collectives.size(),
                Error, "internal: transport (rank {} of {}) and collectives (rank {} of {}) differ",
                transport.rank(), transport.size(), collectives.rank(), collectives.size());
  RpcRouter router;
  store::add_feature_routes(router, graph_);
  sample::add_sample_routes(router, graph_, options.sampling);
  RpcOptions rpc;
  rpc.timeout_s = options.timeout_s;
  // Every rank has its routes before any rank may send it a request.
  collectives_.barrier();
  endpoint_ = std::make_unique<RpcEndpoint>(transport, router.handler(), rpc);
  collectives_.set_timeout_diagnosis([endpoint = endpoint_.get(), timeout = options.timeout_s] {
    return describe_unresponsive(*endpoint, timeout);
  });
  RpcEndpoint* remote = graph_.meta().num_parts > 1 ? endpoint_.get() : nullptr;
  fetcher_ = std::make_unique<store::FeatureFetcher>(graph_, remote);
  sampler_ = std::make_unique<sample::DistSampler>(graph_, remote, options.sampling);
}

Session::~Session() {
  // The diagnosis points at the endpoint, which goes first.
  collectives_.set_timeout_diagnosis({});
}

void Session::finish() { endpoint_->shutdown(); }

uint64_t Session::request_bytes_sent() const { return transport_.bytes_sent(); }

}  // namespace partita::runtime
