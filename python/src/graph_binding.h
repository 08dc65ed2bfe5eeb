#pragma once
// The job and the distributed graph, for Python (docs/python.md: partita.init, DistGraph).
#include <torch/extension.h>

#include <memory>
#include <string>
#include <vector>

#include "partita/comm/mpi_scope.h"
#include "partita/loader/seeds.h"
#include "partita/runtime/mpi_rank.h"

namespace partita::python {

// This process's MPI scope, started by the first init() or DistGraph (MPI_Init once per
// process), held by the module and by every open graph, so MPI is finalized only after
// finalize() and the last graph's close: a graph kept past finalize() stays usable.
std::shared_ptr<MpiScope> job();

// One rank's view of a partition directory: its worker-mode session (runtime/session.h)
// over MPI_COMM_WORLD. Collective to open and to close.
class Graph {
 public:
  Graph(const std::string& parts_dir, double timeout_s, bool in_memory);
  ~Graph();

  runtime::Session& session();
  const store::DistGraph& graph();
  // Every id of `split` over all ranks as (original, global) pairs, in the Trainer's way:
  // one allgather (none when every rank holds the whole graph). Collective.
  std::vector<loader::SeedId> all_ids(runtime::Split split);
  // This rank's share of a global batch: the ids it owns (an even share when replicated).
  std::vector<int64_t> share_of(const std::vector<int64_t>& global_batch);
  // Ends the session on every rank (collective); idempotent. Later calls but close() throw.
  void close();
  bool closed() const { return rank_ == nullptr; }

 private:
  std::shared_ptr<MpiScope> mpi_;
  std::unique_ptr<runtime::MpiRank> rank_;
};

void add_graph_bindings(pybind11::module_& m);

}  // namespace partita::python
