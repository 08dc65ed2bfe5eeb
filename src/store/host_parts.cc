#include "partita/store/host_parts.h"

#include "partita/core/error.h"

namespace partita::store {

HostParts HostParts::map(const DistGraph& graph, const std::vector<int>& peers, int servers) {
  HostParts parts;
  parts.parts_.resize(static_cast<size_t>(graph.world_size()));
  if (graph.replicated() || graph.meta().num_parts <= 1) return parts;  // nothing remote
  for (int r : peers) {
    if (r < 0 || r >= graph.world_size() || r == graph.rank() || r >= graph.meta().num_parts)
      continue;
    try {
      // Mapped, not copied (in_memory off): the owner's pages are shared.
      DistGraph part = servers > 0
                           ? DistGraph::open_server(graph.dir(), r, graph.world_size(), servers)
                           : DistGraph::open(graph.dir(), r, graph.world_size());
      parts.parts_[static_cast<size_t>(r)] = std::make_unique<DistGraph>(std::move(part));
    } catch (const Error&) {
      // Left out: its rows travel as requests (see the header).
    }
  }
  return parts;
}

HostParts HostParts::map_every_part(const DistGraph& graph, int servers) {
  HostParts parts;
  parts.parts_.resize(static_cast<size_t>(graph.world_size()));
  if (graph.replicated() || graph.meta().num_parts <= 1) return parts;
  const bool own_part = !graph.client();
  for (int r = 0; r < graph.meta().num_parts; ++r) {
    if (own_part && r == graph.rank()) continue;
    DistGraph part = servers > 0
                         ? DistGraph::open_server(graph.dir(), r, graph.world_size(), servers)
                         : DistGraph::open(graph.dir(), r, graph.world_size());
    parts.parts_[static_cast<size_t>(r)] = std::make_unique<DistGraph>(std::move(part));
  }
  return parts;
}

std::vector<int> HostParts::ranks() const {
  std::vector<int> out;
  for (size_t r = 0; r < parts_.size(); ++r)
    if (parts_[r]) out.push_back(static_cast<int>(r));
  return out;
}

}  // namespace partita::store
