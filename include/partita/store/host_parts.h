#pragma once
// Other ranks' parts of this rank's partition directory, mapped read-only (issue 23): the
// parts of ranks on the same host, so that their feature, label and degree rows
// (FeatureFetcher) and their neighbor samples (sample::DistSampler) are read from memory
// instead of requested. Which ranks qualify (same host, same directory) is decided by the
// caller (runtime/host_local.h); this class only maps and looks up.
//
// Each peer part is opened as its serving rank opens it (DistGraph::open, or open_server in
// server-client mode) and checked the same way (check_part); its files are mapped, never
// copied, so the page cache shares them with the owner. A peer whose part fails to open is
// left out: its rows go through requests as before.
//
// Thread-safety: immutable after map(); peer() may be called from any thread. Must outlive
// the fetcher and sampler given it.
#include <memory>
#include <vector>

#include "partita/store/dist_graph.h"

namespace partita::store {

class HostParts {
 public:
  HostParts() = default;
  // Maps the part of each world rank in `peers` (ranks that serve a part of graph.dir():
  // worker ranks, or the first `servers` ranks in server-client mode, servers > 0).
  static HostParts map(const DistGraph& graph, const std::vector<int>& peers, int servers);
  // Maps the part of every rank that serves one (all but this rank's own; a trainer of
  // server-client mode, which owns none, maps all `servers` parts), for sampling every node
  // here (runtime::Topology::kFull). Unlike map(), a part that fails to open is an error
  // (FormatError, IoError as DistGraph::open): the caller agrees on it (runtime/failure.h).
  // Maps nothing on a 1-part (replicated) directory, whose one part is every rank's own.
  static HostParts map_every_part(const DistGraph& graph, int servers);

  // The part served by world rank `rank`, or null when it is not mapped.
  const DistGraph* peer(int rank) const {
    return rank >= 0 && rank < static_cast<int>(parts_.size()) ? parts_[rank].get() : nullptr;
  }
  // The ranks whose parts are mapped, ascending.
  std::vector<int> ranks() const;
  bool empty() const { return ranks().empty(); }

 private:
  std::vector<std::unique_ptr<DistGraph>> parts_;  // by world rank, null: not mapped
};

}  // namespace partita::store
