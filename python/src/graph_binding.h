#pragma once
// The job and the distributed graph, for Python (docs/python.md: partita.init, DistGraph).
#include <torch/extension.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "partita/comm/mpi_scope.h"
#include "partita/loader/seeds.h"
#include "partita/runtime/host_local.h"
#include "partita/runtime/mpi_rank.h"
#include "partita/store/dist_embedding.h"

namespace partita::python {

// This process's MPI scope, started by the first init() or DistGraph (MPI_Init once per
// process), held by the module and by every open graph, so MPI is finalized only after
// finalize() and the last graph's close: a graph kept past finalize() stays usable.
std::shared_ptr<MpiScope> job();

// The split a Python `split=` names: train, valid (or val), test (runtime::split_names);
// UsageError "split: 'x' is not one of train, valid, test" otherwise.
runtime::Split split_of(const std::string& name);

// Something that runs threads over a graph's session (a loader's prefetch pipeline). A Graph
// stops every attached user before its session ends, in close() and in its destructor, so
// that no thread of theirs outlives the session it reads from (issue 29).
class GraphUser {
 public:
  // Stops and joins the user's threads; the user then refuses further use (UsageError).
  // Called with the graph's user list locked, with or without the GIL; must not take the GIL
  // and must not throw.
  virtual void graph_closing() noexcept = 0;

 protected:
  ~GraphUser() = default;
};

// One rank's view of a partition directory: its worker-mode session (runtime/session.h)
// over MPI_COMM_WORLD. Collective to open and to close.
//
// Users (loaders) attach while they live and detach in their destructor; close() and the
// destructor stop every attached user first. The Python objects keep the graph alive as
// long as a loader (pybind11 keep_alive), so a Graph is normally destroyed after its users.
class Graph {
 public:
  // `embeddings`: the learned embedding tables of a typed partition's featureless types
  // (runtime::SessionOptions::embeddings; dim 0: none), built with the session.
  // `edge_ids`: the session's sampler returns edge ids (sample::LocalSamplerOptions::
  // edge_ids), which loaders with edge features need; every rank must pass the same.
  // `host_local`: runtime::SessionOptions::host_local (kOff: every remote row through
  // requests, as between hosts).
  Graph(const std::string& parts_dir, double timeout_s, bool in_memory,
        const store::EmbeddingOptions& embeddings = {}, bool edge_ids = false,
        runtime::HostLocal host_local = runtime::HostLocal::kAuto);
  // Stops the attached users; the session goes without the collective goodbye.
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Thread-safe; `user` must stay valid until detach() or graph_closing(). Throws
  // UsageError when the graph is closed.
  void attach(GraphUser* user);
  // Thread-safe; a no-op for a user the graph no longer holds. Waits while close() stops
  // users. Call without the GIL.
  void detach(GraphUser* user);

  runtime::Session& session();
  const store::DistGraph& graph();
  // Every id of `split` over all ranks as (original, global) pairs, in the Trainer's way:
  // one allgather (none when every rank holds the whole graph). Collective.
  std::vector<loader::SeedId> all_ids(runtime::Split split);
  // This rank's share of a global batch: the ids it owns (an even share when replicated).
  std::vector<int64_t> share_of(const std::vector<int64_t>& global_batch);
  // Stops the attached users, then ends the session on every rank (collective); idempotent.
  // Later calls but close() throw UsageError.
  void close();
  bool closed() const { return rank_ == nullptr; }

 private:
  // Stops every attached user and forgets it. Call without the GIL.
  void stop_users();

  std::shared_ptr<MpiScope> mpi_;
  std::unique_ptr<runtime::MpiRank> rank_;
  std::mutex users_mu_;  // guards the two below, held while users stop
  std::vector<GraphUser*> users_;
  bool stopped_users_ = false;  // close() or the destructor began: attach() refuses
};

void add_graph_bindings(pybind11::module_& m);

}  // namespace partita::python
