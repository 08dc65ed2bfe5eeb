#include "partita/runtime/session.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "partita/comm/errors.h"
#include "partita/comm/rpc.h"
#include "partita/comm/transport.h"
#include "partita/comm/wire.h"
#include "partita/comm/wire_version.h"
#include "partita/runtime/split_ids.h"

namespace partita::runtime {
namespace {

// "This trainer is done" (server-client mode), answered by servers only, is
// kRequestTrainerDone of comm/request_kinds.h. Request: a counted char array, the usage
// error the trainer stopped on (empty if none); reply: empty.

// Maps what `role` maps (see session.h, Roles).
store::DistGraph open_role(const Collectives& world, Role role, const SessionOptions& options) {
  switch (role) {
    case Role::kServer:
      return store::DistGraph::open_server(options.parts_dir, world.rank(), world.size(),
                                           options.servers, options.graph);
    case Role::kTrainer:
      return store::DistGraph::open_client(options.parts_dir, world.rank(), world.size(),
                                           options.servers);
    case Role::kWorker:
    default:
      return store::DistGraph::open(options.parts_dir, world.rank(), world.size(), options.graph);
  }
}

// Maps this rank's part, then agrees with every other rank on whether any failed.
store::DistGraph open_agreed(Collectives& coll, Role role, const SessionOptions& options) {
  store::DistGraph graph;
  agree_on_setup(coll, [&] { graph = open_role(coll, role, options); });
  return graph;
}

}  // namespace

namespace {

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

const NameTable<Topology>& topology_names() {
  static const NameTable<Topology> names{{"owned", Topology::kOwned}, {"full", Topology::kFull}};
  return names;
}

Role role_of(const SessionOptions& options, int world_rank) {
  if (options.servers <= 0) return Role::kWorker;
  return world_rank < options.servers ? Role::kServer : Role::kTrainer;
}

const char* role_name(Role role) {
  switch (role) {
    case Role::kServer:
      return "server";
    case Role::kTrainer:
      return "trainer";
    case Role::kWorker:
    default:
      return "worker";
  }
}

// The trainers that said they are done, written by the service thread's route, read by
// the server's finish().
struct Session::DoneBoard {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<char> done;  // by world rank
  int count = 0;
  std::string usage_error;  // the first trainer's that failed with one
};

Session::Session(Transport& transport, Collectives& world, const SessionOptions& options,
                 Collectives* trainers)
    : transport_(transport),
      world_(world),
      role_(role_of(options, world.rank())),
      servers_(std::max(0, options.servers)),
      timeout_s_(options.timeout_s),
      training_(role_ == Role::kWorker    ? &world
                : role_ == Role::kTrainer ? trainers
                                          : nullptr),
      graph_(open_agreed(world, role_, options)) {
  PARTITA_CHECK(transport.rank() == world.rank() && transport.size() == world.size(), Error,
                "internal: transport (rank {} of {}) and collectives (rank {} of {}) differ",
                transport.rank(), transport.size(), world.rank(), world.size());
  // The counts were checked by the opening; the trainers' collectives must match them.
  const bool trainer = role_ == Role::kTrainer;
  PARTITA_CHECK(
      trainer == (trainers != nullptr) &&
          (!trainer || (trainers->size() == world.size() - servers_ &&
                        trainers->rank() == world.rank() - servers_)),
      Error, "internal: world rank {} ({}) got trainers' collectives {} (expected rank {} of {})",
      world.rank(), role_name(role_),
      trainers == nullptr ? std::string("none")
                          : fmt::format("rank {} of {}", trainers->rank(), trainers->size()),
      world.rank() - servers_, world.size() - servers_);
  // What the sampling options need of the partition (edge times, weights): the metadata's
  // verdict, the same on every rank, before any rank waits for another.
  sample::check_sampling_data(graph_, options.sampling);
  if (role_ != Role::kWorker) {
    // Every id of each split: servers contribute theirs, trainers nothing (one world
    // allgather, so it runs on every rank, servers included).
    for (Split split : {Split::kTrain, Split::kValid, Split::kTest}) {
      std::vector<store::SeedId> ids = world_.allgather(own_split_ids(graph_, split));
      if (trainer) job_ids_[static_cast<size_t>(split)] = std::move(ids);
    }
  }
  check_wire_versions(world_);  // one build per job, before any request (comm/wire_version.h)
  // Host-local reads: one allgather on every rank (whatever its setting), then each rank maps
  // the parts of the serving ranks that share its host and directory.
  {
    const std::vector<HostIdentity> ids = world_.allgather(
        std::vector<HostIdentity>{host_identity(options.parts_dir, options.host_local)});
    const int serving = role_ == Role::kWorker ? world.size() : servers_;
    if (role_ != Role::kServer)
      host_parts_ =
          store::HostParts::map(graph_, host_local_peers(ids, world.rank(), serving), servers_);
  }
  // Full topology: every worker or trainer maps every other part (agreed: a part that does
  // not open fails the job on every rank, as the opening does).
  if (options.topology == Topology::kFull) {
    full_topology_ = role_ != Role::kServer;
    agree_on_setup(world_, [&] {
      if (full_topology_) topology_parts_ = store::HostParts::map_every_part(graph_, servers_);
    });
  }
  RpcRouter router;
  make_embeddings(options, router);
  store::add_feature_routes(router, graph_);
  sample::add_sample_routes(router, graph_, options.sampling);
  if (role_ == Role::kServer) {
    done_ = std::make_unique<DoneBoard>();
    done_->done.assign(static_cast<size_t>(world.size()), 0);
    router.add(kRequestTrainerDone, [board = done_.get(), servers = servers_](int source,
                                                                              WireReader& request) {
      const ArrayView<const char> text = request.get_array<char>();
      request.expect_end();
      PARTITA_CHECK(source >= servers, CommError,
                    "rank {} is a server, not a trainer: it cannot say training is done", source);
      {
        std::lock_guard<std::mutex> lock(board->mutex);
        if (!board->done[static_cast<size_t>(source)]) {
          board->done[static_cast<size_t>(source)] = 1;
          ++board->count;
        }
        if (!text.empty() && board->usage_error.empty())
          board->usage_error.assign(text.data(), static_cast<size_t>(text.size()));
      }
      board->changed.notify_all();
      return std::vector<uint8_t>{};
    });
  }
  RpcOptions rpc;
  rpc.timeout_s = options.timeout_s;
  // Every rank has its routes before any rank may send it a request.
  world_.barrier();
  endpoint_ = std::make_unique<RpcEndpoint>(transport, router.handler(), rpc);
  auto diagnosis = [endpoint = endpoint_.get(), timeout = options.timeout_s] {
    return describe_unresponsive(*endpoint, timeout);
  };
  world_.set_timeout_diagnosis(diagnosis);
  if (training_ != nullptr && training_ != &world_) training_->set_timeout_diagnosis(diagnosis);
  RpcEndpoint* remote = graph_.meta().num_parts > 1 ? endpoint_.get() : nullptr;
  fetcher_ = std::make_unique<store::FeatureFetcher>(graph_, remote);
  sampler_ = std::make_unique<sample::DistSampler>(graph_, remote, options.sampling);
  if (!host_parts_.empty()) fetcher_->set_host_parts(&host_parts_);
  // Samples from every mapped part (topology_parts_ holds the same-host parts too).
  if (!topology_parts_.empty())
    sampler_->set_host_parts(&topology_parts_);
  else if (!host_parts_.empty())
    sampler_->set_host_parts(&host_parts_);
  for (auto& table : embeddings_)
    if (table) table->attach(world_.size() > 1 ? endpoint_.get() : nullptr);
}

void Session::make_embeddings(const SessionOptions& session, RpcRouter& router) {
  const store::EmbeddingOptions& options = session.embeddings;
  if (options.dim <= 0 || !graph_.typed()) return;
  const partition::TypedMeta& typed = graph_.typed_meta();
  const int parts = graph_.meta().num_parts;
  embeddings_.resize(typed.node_types.size());
  int table_id = 0;
  for (int t = 0; t < static_cast<int>(typed.node_types.size()); ++t) {
    if (typed.node_types[static_cast<size_t>(t)].feat_dim > 0) continue;
    const int id = table_id++;
    if (session.embedded_types == SessionOptions::EmbeddedTypes::kTarget && t != typed.target_type)
      continue;
    // World rank r owns part r's range of the type (its server or worker); a 1-part
    // directory (replicated) gives rank 0 every row; trainers own none.
    std::vector<store::IdRange> ranges(static_cast<size_t>(world_.size()));
    for (int r = 0; r < world_.size(); ++r) {
      if (parts == 1 ? r != 0 : r >= parts) continue;
      const auto [begin, end] = typed.type_range(parts == 1 ? 0 : r, t);
      ranges[static_cast<size_t>(r)] = {begin, end};
    }
    const store::IdRange mine = ranges[static_cast<size_t>(world_.rank())];
    ArrayView<const int64_t> originals;
    if (mine.size() > 0)
      originals = graph_.original_ids().subview(mine.begin - graph_.first_node(), mine.size());
    store::EmbeddingOptions table = options;
    table.table_id = id;
    embeddings_[static_cast<size_t>(t)] =
        std::make_unique<store::DistEmbedding>(table, std::move(ranges), world_.rank(), originals);
    embeddings_[static_cast<size_t>(t)]->add_routes(router);
  }
}

store::DistEmbedding* Session::embedding(int type) {
  if (type < 0 || type >= static_cast<int>(embeddings_.size())) return nullptr;
  return embeddings_[static_cast<size_t>(type)].get();
}

std::vector<int> Session::embedding_owners() const {
  std::vector<int> owners;
  const int parts = graph_.meta().num_parts;
  for (int r = 0; r < world_.size() && r < (parts == 1 ? 1 : parts); ++r) owners.push_back(r);
  return owners;
}

Session::~Session() {
  // The diagnosis points at the endpoint, which goes first.
  world_.set_timeout_diagnosis({});
  if (training_ != nullptr) training_->set_timeout_diagnosis({});
}

Collectives& Session::collectives() {
  PARTITA_CHECK(training_ != nullptr, Error,
                "internal: rank {} is a server: it takes part in no training collective",
                world_.rank());
  return *training_;
}

const std::vector<store::SeedId>& Session::job_ids(Split split) const {
  PARTITA_CHECK(role_ == Role::kTrainer, Error,
                "internal: job_ids() on a {} (its ids are its graph's)", role_name(role_));
  return job_ids_[static_cast<size_t>(split)];
}

void Session::finish() {
  if (finished_) return;
  finished_ = true;
  if (role_ == Role::kTrainer) tell_servers_done("");
  if (role_ == Role::kServer) wait_for_trainers();
  endpoint_->shutdown();
}

void Session::fail_with_usage_error(const std::string& message) noexcept {
  if (role_ != Role::kTrainer) return;
  try {
    tell_servers_done(message.empty() ? std::string("usage error") : message);
  } catch (...) {  // best effort (see the header)
  }
}

void Session::tell_servers_done(const std::string& usage_error) {
  std::vector<RpcRequest> requests;
  for (int server = 0; server < servers_; ++server) {
    WireWriter request(16 + usage_error.size());
    request.put<uint64_t>(kRequestTrainerDone);
    request.put_array<char>(
        ArrayView<const char>(usage_error.data(), static_cast<int64_t>(usage_error.size())));
    requests.push_back({server, request.take()});
  }
  endpoint_->call_all(std::move(requests));
}

void Session::wait_for_trainers() {
  const int trainers = world_.size() - servers_;
  const auto interval = std::chrono::duration<double>(timeout_s_);
  const double probe_s = std::min(10.0, std::max(1.0, timeout_s_ / 2));
  std::unique_lock<std::mutex> lock(done_->mutex);
  // Every trainer, also after a usage error: a trainer's usage error is the same on every
  // trainer, and each must have its message answered before this server stops serving (else
  // it waits for the reply until its deadline, past the job's usage agreement).
  const auto ended = [&] { return done_->count == trainers; };
  while (!done_->changed.wait_for(lock, interval, ended)) {
    // Not done within the interval: fine while every trainer not done still answers.
    lock.unlock();
    const std::vector<int> silent_ranks = endpoint_->unresponsive_ranks(probe_s);
    lock.lock();
    std::vector<int> silent;
    for (int r : silent_ranks)
      if (r >= servers_ && !done_->done[static_cast<size_t>(r)]) silent.push_back(r);
    if (!silent.empty()) {
      throw TimeoutError(fmt::format(
          "server rank {}: trainer rank{} {} did not answer a ping within {:g} s while the "
          "servers waited for training to end (stopped, dead or cut off)",
          world_.rank(), silent.size() == 1 ? "" : "s", fmt::join(silent, ", "), probe_s));
    }
  }
  // A trainer failed with a usage error: this server raises it too (see the header).
  if (!done_->usage_error.empty()) throw UsageError(done_->usage_error);
}

uint64_t Session::request_bytes_sent() const { return transport_.bytes_sent(); }

bool Session::holds_topology() const {
  return role_ != Role::kServer && (graph_.meta().num_parts == 1 || full_topology_);
}

std::vector<sample::CscView> Session::topology_views() const {
  std::vector<sample::CscView> views;
  if (!holds_topology()) return views;
  if (graph_.meta().num_parts == 1) return {sample::owned_view(graph_)};
  for (int part = 0; part < graph_.meta().num_parts; ++part) {
    const store::DistGraph* mapped = topology_parts_.peer(part);
    const bool own = mapped == nullptr && !graph_.client() && part == graph_.rank();
    PARTITA_CHECK(own || mapped != nullptr, Error,
                  "internal: part {} of the topology is not mapped", part);
    views.push_back(sample::owned_view(own ? graph_ : *mapped));
  }
  return views;
}

}  // namespace partita::runtime
