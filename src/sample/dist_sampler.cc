#include "partita/sample/dist_sampler.h"

#include <string>
#include <vector>

#include "partita/core/error.h"

namespace partita::sample {

CscView owned_view(const store::DistGraph& graph) {
  CscView view;
  view.indptr = graph.indptr();
  view.indices = graph.indices();
  view.first_row = graph.first_node();
  view.stream_ids = graph.original_ids();
  return view;
}

void add_sample_routes(RpcRouter& router, const store::DistGraph& graph,
                       const LocalSamplerOptions& options) {
  // Validated once here (O(rows)); each request then goes straight to the kernel.
  const CscView view = owned_view(graph);
  validate(view, "sample service");
  KernelOptions kernel;
  kernel.replacement = options.replacement;
  kernel.weighting = options.weighting;
  kernel.threads = options.threads;
  kernel.chunk = options.chunk;
  router.add(kRequestSampleHop, [&graph, view, kernel](int, WireReader& request) {
    const uint64_t hop_key = request.get<uint64_t>();
    KernelOptions hop = kernel;
    hop.fanout = request.get<int64_t>();
    ArrayView<const int64_t> frontier = request.get_array<int64_t>();
    request.expect_end();
    for (int64_t gid : frontier)
      PARTITA_CHECK(graph.owns(gid), CommError, "rank {} was asked to sample node {} it does not own",
                    graph.rank(), gid);
    NeighborSample sample;
    sample_neighbors(view, frontier, hop_key, hop, &sample);
    WireWriter reply(32 + (sample.counts.size() + sample.neighbors.size()) * 8);
    reply.put_array<int64_t>(sample.counts);
    reply.put_array<int64_t>(sample.neighbors);
    return reply.take();
  });
}

DistSampler::DistSampler(const store::DistGraph& graph, RpcEndpoint* endpoint,
                         const LocalSamplerOptions& options)
    : graph_(graph), endpoint_(endpoint), local_(owned_view(graph), options) {}

void DistSampler::sample_hop(const HopRequest& request, NeighborSample* out) {
  const ArrayView<const int64_t> frontier = request.frontier;
  const int64_t n = frontier.size();
  // owner_of[i]: -1 for an owned node, else the rank that samples it.
  std::vector<int> owner_of(static_cast<size_t>(n), -1);
  std::vector<int64_t> local_nodes;
  std::vector<std::vector<int64_t>> remote_nodes;
  local_nodes.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t gid = frontier[i];
    if (graph_.owns(gid)) {
      local_nodes.push_back(gid);
      continue;
    }
    const int owner = graph_.owner_rank(gid);  // throws on an id out of range
    if (remote_nodes.empty()) remote_nodes.resize(static_cast<size_t>(graph_.world_size()));
    owner_of[i] = owner;
    remote_nodes[owner].push_back(gid);
  }

  // Remote requests first, so owners work while this rank samples its own nodes.
  std::vector<RpcRequest> requests;
  std::vector<int> owners;
  int64_t request_bytes = 0;
  for (int r = 0; r < static_cast<int>(remote_nodes.size()); ++r) {
    if (remote_nodes[r].empty()) continue;
    WireWriter w(40 + remote_nodes[r].size() * 8);
    w.put<uint64_t>(kRequestSampleHop);
    w.put<uint64_t>(request.hop_key);
    w.put<int64_t>(request.fanout);
    w.put_array<int64_t>(remote_nodes[r]);
    requests.push_back({r, w.take()});
    request_bytes += static_cast<int64_t>(requests.back().data.size());
    owners.push_back(r);
  }
  PARTITA_CHECK(requests.empty() || endpoint_ != nullptr, Error,
                "internal: remote nodes to sample without an endpoint");

  NeighborSample local_sample;
  HopRequest local_request = request;
  local_request.frontier = local_nodes;
  std::vector<std::vector<uint8_t>> replies;
  if (requests.empty()) {
    local_.sample_hop(local_request, &local_sample);
  } else {
    // Send every request, sample the owned nodes while the owners serve them, then wait: no
    // thread of its own. (If local sampling throws, `pending` withdraws the call.)
    RpcEndpoint::Pending pending = endpoint_->start_all(std::move(requests));
    local_.sample_hop(local_request, &local_sample);
    replies = endpoint_->finish_all(std::move(pending));
  }

  // Per-owner results as (counts, neighbors) views, cursors advancing in frontier order.
  struct Cursor {
    ArrayView<const int64_t> counts, neighbors;
    int64_t node = 0, offset = 0;
  };
  std::vector<Cursor> cursors(remote_nodes.size());
  int64_t reply_bytes = 0;
  for (size_t q = 0; q < replies.size(); ++q) {
    const int r = owners[q];
    WireReader reader(replies[q].data(), replies[q].size(),
                      "sample reply of rank " + std::to_string(r));
    cursors[r].counts = reader.get_array<int64_t>();
    cursors[r].neighbors = reader.get_array<int64_t>();
    reader.expect_end();
    PARTITA_CHECK(cursors[r].counts.size() == static_cast<int64_t>(remote_nodes[r].size()),
                  CommError, "sample reply of rank {}: {} counts for {} nodes", r,
                  cursors[r].counts.size(), remote_nodes[r].size());
    reply_bytes += static_cast<int64_t>(replies[q].size());
  }

  out->counts.resize(static_cast<size_t>(n));
  out->neighbors.clear();
  out->neighbors.reserve(local_sample.neighbors.size() + static_cast<size_t>(reply_bytes / 8));
  Cursor local_cursor{local_sample.counts, local_sample.neighbors};
  for (int64_t i = 0; i < n; ++i) {
    Cursor& c = owner_of[i] < 0 ? local_cursor : cursors[owner_of[i]];
    const int64_t count = c.counts[c.node++];
    PARTITA_CHECK(count >= 0 && c.offset + count <= c.neighbors.size(), CommError,
                  "sample reply: inconsistent counts");
    out->counts[i] = count;
    out->neighbors.insert(out->neighbors.end(), c.neighbors.begin() + c.offset,
                          c.neighbors.begin() + c.offset + count);
    c.offset += count;
  }
  local_nodes_ += static_cast<int64_t>(local_nodes.size());
  remote_nodes_ += n - static_cast<int64_t>(local_nodes.size());
  remote_requests_ += static_cast<int64_t>(replies.size());
  remote_bytes_ += request_bytes + reply_bytes;
}

DistSamplerStats DistSampler::stats() const {
  return {local_nodes_.load(), remote_nodes_.load(), remote_requests_.load(),
          remote_bytes_.load()};
}

}  // namespace partita::sample
