#pragma once
// The wiring of one rank of a distributed job (DESIGN: runtime/), built in the order the
// contracts require: the mapped partition (opening agreed by every rank), every service
// route registered and a barrier before the request endpoint starts serving, then the
// clients (feature fetcher, distributed sampler). A Session runs over any Transport and
// Collectives: MpiRank (mpi_rank.h) gives it MPI's; tests give it in-process ones (threads
// as ranks), so the trainer runs in-process too.
//
// finish() shuts the request layer down cleanly (no rank stops serving while another may
// still ask it something); call it on the success path of every rank.
//
// Set-up is agreed (failure.h, agree_on_setup): after every rank tried to map its part, one
// allreduce (with the collectives' deadline) tells all ranks whether any failed (a missing
// or corrupt file, parts that do not match the ranks). If one did, the constructor throws
// SetupError on every rank. Alone (one rank) an opening error propagates as it is.
//
// Roles (DESIGN 5). Worker mode (options.servers == 0): every rank maps its part (or the
// whole graph, replicated mode), serves it and trains. Server-client mode (options.servers
// == P, the part count, with more than P ranks): world ranks 0..P-1 are servers (rank r maps
// and serves part r) and take part in no training collective; ranks P..W-1 are trainers
// (clients): they map no part (DistGraph::open_client), fetch and sample everything through
// the servers, and train among themselves on a Collectives of their own. Set-up (the agreed
// opening, the gathering of the split ids, the barrier before serving) spans the world.
//
// Training contract: rank(), size() and collectives() are this rank's among the ranks that
// train (the world in worker mode, the trainers in server-client mode), so a Trainer runs
// unchanged on either. Every training id is known to every trainer: in server-client mode
// the servers contribute their split ids to one world allgather at set-up (job_ids()).
//
// Library code: nothing here prints or exits. Commands reach a Session through
// run_mpi_ranks (rank_job.h), which runs it by role and owns the job's failure policy.
#include <array>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "partita/comm/collectives.h"
#include "partita/core/error.h"
#include "partita/core/name_table.h"
#include "partita/runtime/failure.h"
#include "partita/runtime/host_local.h"
#include "partita/sample/dist_sampler.h"
#include "partita/store/dist_embedding.h"
#include "partita/store/dist_graph.h"
#include "partita/store/feature_store.h"
#include "partita/store/host_parts.h"
#include "partita/store/seed_id.h"

namespace partita {
class RpcEndpoint;
class RpcRouter;
class Transport;
}  // namespace partita

namespace partita::runtime {

// Which rows' in-edges a rank maps for sampling (docs/training.md, "Topology"). Topology
// is small next to features (papers100M: ~13 GB of CSC against 57 GB of fp32 features), so
// a rank may hold all of it and sample every node itself, while feature rows stay with
// their owners.
enum class Topology {
  kOwned,  // its own part's; other ranks' nodes are sampled by their owners (requests)
  kFull,   // every part's (mapped from the directory, which every rank reads): every node
           // is sampled here, with the owner's view and streams, so samples are identical
};
const NameTable<Topology>& topology_names();  // owned, full

struct SessionOptions {
  std::string parts_dir;
  double timeout_s = 60;  // every remote wait of the session: requests and collectives
  // How every rank samples (the same on every rank): temporal (edge_time) and weighted
  // (edge_weight) sampling need those arrays in the parts; the constructor refuses options
  // the partition cannot serve (sample::check_sampling_data: ParameterError).
  sample::LocalSamplerOptions sampling;
  store::DistGraphOptions graph;
  // Server-client mode (see Roles above): the first `servers` ranks serve one part each and
  // the others train; it must equal the directory's part count (> 1) and be less than the
  // ranks. 0 (the default): worker mode.
  int servers = 0;
  // Learned embeddings (store/dist_embedding.h) for the node types without features of a
  // typed partition, one table per such type (table id = its index among them), built when
  // embeddings.dim > 0 and the graph is typed. Part p's range of the type is owned by the
  // rank serving part p (worker or server); in replicated mode rank 0 owns every row.
  // embeddings.seed keys the initial rows (use the training seed).
  store::EmbeddingOptions embeddings;
  // Which of those types get a table: every featureless type (R-GCN reads them all), or the
  // labelled (target) type alone when it is featureless (HAN: its metapath blocks hold target
  // nodes only). A table's id stays its type's index among all featureless types either way,
  // so its initial rows and its state in checkpoint files do not depend on which others exist.
  enum class EmbeddedTypes { kFeatureless, kTarget };
  EmbeddedTypes embedded_types = EmbeddedTypes::kFeatureless;
  // Host-local reads (runtime/host_local.h): kAuto (the default) reads the features,
  // labels, degrees and neighbor samples of ranks on the same host that opened the same
  // directory from their mapped parts instead of requesting them; results are identical.
  // Learned embeddings always travel as requests (they change during training).
  HostLocal host_local = HostLocal::kAuto;
  // kFull: a worker or trainer also maps every other part's topology for sampling
  // (store::HostParts::map_every_part); nothing changes on a 1-part directory, whose part is
  // the whole graph already. Servers map only their own part either way.
  Topology topology = Topology::kOwned;
};

enum class Role { kWorker, kServer, kTrainer };
// The role of world rank `world_rank` (see Roles above; the counts are checked by Session).
Role role_of(const SessionOptions& options, int world_rank);
const char* role_name(Role role);  // "worker", "server", "trainer"

// The training, validation and test ids.
enum class Split { kTrain = 0, kValid = 1, kTest = 2 };
const NameTable<Split>& split_names();  // train, valid, test (split_ids.cc)

class Session {
 public:
  // `transport` and `world` span the same ranks (the whole job); `trainers` spans the
  // trainers of server-client mode, in world order (world rank options.servers + t is its
  // rank t), and is given on trainers only (null on servers and in worker mode). All must
  // outlive the session. Collective over the world.
  Session(Transport& transport, Collectives& world, const SessionOptions& options,
          Collectives* trainers = nullptr);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Role role() const { return role_; }
  // Among the ranks that train (see Training contract); on a server, its world rank and the
  // world size.
  int rank() const { return training_ != nullptr ? training_->rank() : world_.rank(); }
  int size() const { return training_ != nullptr ? training_->size() : world_.size(); }
  int world_rank() const { return world_.rank(); }
  int world_size() const { return world_.size(); }
  const store::DistGraph& graph() const { return graph_; }
  // The collectives of the ranks that train. Throws Error on a server (it trains nothing).
  Collectives& collectives();
  // A trainer of server-client mode: every id of `split` in the job, each server's ascending,
  // servers in rank order. Throws Error in other roles (their ids are graph()'s). Every
  // role: runtime::split_ids (split_ids.h).
  const std::vector<store::SeedId>& job_ids(Split split) const;
  store::FeatureFetcher& fetcher() { return *fetcher_; }
  sample::DistSampler& sampler() { return *sampler_; }
  const sample::DistSampler& sampler() const { return *sampler_; }
  RpcEndpoint* endpoint() { return endpoint_.get(); }
  // The learned embedding table of node type `type`, or null when the type has features
  // (or SessionOptions::embeddings.dim is 0). Same tables on every rank of the job.
  store::DistEmbedding* embedding(int type);
  // The world ranks that own embedding rows (servers in server-client mode), ascending.
  std::vector<int> embedding_owners() const;
  // The world ranks whose parts this rank reads from memory (SessionOptions::host_local),
  // ascending; empty when off, alone, replicated, or no rank shares host and directory.
  std::vector<int> host_local_ranks() const { return host_parts_.ranks(); }
  // Whether this rank samples every node itself: a 1-part directory, or Topology::kFull
  // (not on a server). Then topology_views() covers the whole graph.
  bool holds_topology() const;
  // Each part's in-edges as its owner samples them (sample::owned_view: global source ids,
  // streams keyed by original ids), in part order, so the views' rows cover [0, num_nodes)
  // contiguously; empty unless holds_topology(). The views borrow the mapped parts, which
  // live as long as the session.
  std::vector<sample::CscView> topology_views() const;
  // Bytes this rank sent to other ranks as requests and replies so far (Transport).
  uint64_t request_bytes_sent() const;

  // Collective: stops serving requests once every rank is done asking. Call it on the
  // success path of every rank: a worker or trainer once its work is done; a server right
  // after construction: it returns when every trainer called finish(). That wait has no
  // fixed deadline (training takes as long as it takes) but is bounded by the trainers'
  // liveness: every timeout_s the server pings the trainers that are not done, and throws
  // TimeoutError naming those that do not answer (stopped, dead or cut off). A second call
  // does nothing.
  void finish();
  // Instead of finish(), on a trainer whose work failed with a UsageError (such checks give
  // the same verdict on every trainer: flags, an existing checkpoint directory): tells the
  // servers, whose finish() then throws UsageError(message) too, once every trainer has said
  // it is done or failed, so that every rank of the job raises it and the command line
  // prints it once (rank_job.h) instead of aborting.
  // Does not stop this rank's request service. A no-op on workers and servers. Best effort:
  // never throws (the command line's agreement has its own deadline).
  void fail_with_usage_error(const std::string& message) noexcept;

 private:
  struct DoneBoard;  // servers: which trainers said they are done
  // `usage_error` empty: done; else the UsageError the trainer failed with.
  void tell_servers_done(const std::string& usage_error);
  void wait_for_trainers();
  // Builds the tables of SessionOptions::embeddings and registers their routes.
  void make_embeddings(const SessionOptions& options, RpcRouter& router);

  Transport& transport_;
  Collectives& world_;
  Role role_;
  int servers_;
  double timeout_s_;
  Collectives* training_;  // worker: &world_; trainer: the trainers'; server: null
  bool finished_ = false;
  store::DistGraph graph_;
  std::array<std::vector<store::SeedId>, 3> job_ids_;  // trainers of server-client mode
  std::unique_ptr<DoneBoard> done_;
  // By node type (null: none); they outlive the endpoint, whose handlers use them.
  std::vector<std::unique_ptr<store::DistEmbedding>> embeddings_;
  std::unique_ptr<RpcEndpoint> endpoint_;
  store::HostParts host_parts_;  // before the fetcher and sampler, which read it
  // Topology::kFull: every other part, for the sampler (before it, which reads them).
  store::HostParts topology_parts_;
  bool full_topology_ = false;
  std::unique_ptr<store::FeatureFetcher> fetcher_;
  std::unique_ptr<sample::DistSampler> sampler_;
};

}  // namespace partita::runtime
