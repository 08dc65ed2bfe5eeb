#include "partita/sample/dist_sampler.h"

#include <memory>
#include <string>
#include <vector>

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/sample/sample_wire.h"

namespace partita::sample {

CscView owned_view(const store::DistGraph& graph) {
  CscView view;
  view.indptr = graph.indptr();
  view.indices = graph.indices();
  view.first_row = graph.first_node();
  view.stream_ids = graph.original_ids();
  view.relations = graph.edge_relations();  // empty for a homogeneous graph
  view.times = graph.edge_times();          // empty when the parts hold no edge_time
  view.weights = graph.edge_weights();      // empty when the parts hold no edge_weight
  view.first_edge = graph.first_edge();     // edge ids: the part's slots (edge_ids built by
                                            // whoever samples with them)
  return view;
}

void check_sampling_data(const store::DistGraph& graph, const LocalSamplerOptions& options) {
  check_sampling_options(options);
  if (options.temporal != Temporal::kNone) {
    // Seed times: node_time (node task), or an edge split's pair times (the link task
    // refuses a split that is not by time, the node task a partition without node_time).
    const bool seed_times = graph.has_node_times() || graph.meta().summary.edge_split.has_value();
    PARTITA_CHECK_PARAM(graph.has_edge_times() && seed_times, "temporal",
                        "{} holds no {} (partition a dataset with edge_time.npy and "
                        "node_time.npy, e.g. from `generate --edge-time --node-time`)",
                        graph.dir(),
                        !graph.has_edge_times() && !seed_times ? "edge or node times"
                        : !graph.has_edge_times()              ? "edge times"
                                                               : "node times");
  }
  if (options.weighting == Weighting::kEdgeWeight)
    PARTITA_CHECK_PARAM(graph.has_edge_weights(), "sample_weight",
                        "edge_weight: {} holds no edge weights (partition a dataset with "
                        "edge_weight.npy, e.g. from `generate --edge-weight`)",
                        graph.dir());
}

void add_sample_routes(RpcRouter& router, const store::DistGraph& graph,
                       const LocalSamplerOptions& options) {
  // Validated once here (O(rows)); each request then goes straight to the kernel.
  CscView view = owned_view(graph);
  // Edge ids: the route owns the view's (shared by the copies of the handler).
  std::shared_ptr<const std::vector<int64_t>> edge_ids;
  if (options.edge_ids) {
    edge_ids = std::make_shared<const std::vector<int64_t>>(edge_id_range(view));
    view.edge_ids = *edge_ids;
  }
  validate(view, "sample service");
  // Weight summaries (csc_view.h), as LocalSampler builds them, owned by the route too.
  std::shared_ptr<const std::vector<WeightSummary>> summaries;
  if (options.weighting == Weighting::kEdgeWeight && options.temporal == Temporal::kNone &&
      view.weighted() && !view.typed()) {
    summaries =
        std::make_shared<const std::vector<WeightSummary>>(weight_summaries(view, options.threads));
    view.weight_summaries = *summaries;
  }
  const int rank = graph.rank();
  router.add(kRequestSampleHop,
             [view, options, rank, edge_ids, summaries](int, WireReader& request) {
               return serve_hop_request(view, options, rank, request);
             });
}

DistSampler::DistSampler(const store::DistGraph& graph, RpcEndpoint* endpoint,
                         const LocalSamplerOptions& options)
    : graph_(graph), endpoint_(endpoint), local_(owned_view(graph), options) {}

void DistSampler::set_host_parts(const store::HostParts* parts) {
  peers_.clear();
  if (parts == nullptr) return;
  peers_.resize(static_cast<size_t>(graph_.world_size()));
  for (int r : parts->ranks())
    peers_[static_cast<size_t>(r)] =
        std::make_unique<LocalSampler>(owned_view(*parts->peer(r)), local_.options());
}

void DistSampler::sample_hop(const HopRequest& request, NeighborSample* out) {
  const ArrayView<const int64_t> frontier = request.frontier;
  const int64_t n = frontier.size();
  const int self = graph_.rank();
  // Temporal sampling: each node's time goes where the node goes.
  const bool temporal = !request.times.empty();
  PARTITA_CHECK(!temporal || request.times.size() == n, Error,
                "sample: {} times for {} frontier nodes", request.times.size(), n);
  // owner_of[i]: the rank that samples frontier[i] (this one for an owned node).
  std::vector<int> owner_of(static_cast<size_t>(n), self);
  std::vector<int64_t> local_nodes, local_times;
  std::vector<std::vector<int64_t>> remote_nodes(static_cast<size_t>(graph_.world_size()));
  std::vector<std::vector<int64_t>> remote_times(remote_nodes.size());
  // Nodes of same-host ranks whose parts are mapped here: sampled here, not requested.
  std::vector<std::vector<int64_t>> host_nodes(peers_.size()), host_times(peers_.size());
  local_nodes.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t gid = frontier[i];
    if (graph_.owns(gid)) {
      local_nodes.push_back(gid);
      if (temporal) local_times.push_back(request.times[i]);
      continue;
    }
    const int owner = graph_.owner_rank(gid);  // throws on an id out of range
    owner_of[i] = owner;
    const bool host = !peers_.empty() && peers_[static_cast<size_t>(owner)];
    (host ? host_nodes : remote_nodes)[static_cast<size_t>(owner)].push_back(gid);
    if (temporal)
      (host ? host_times : remote_times)[static_cast<size_t>(owner)].push_back(request.times[i]);
  }

  // Remote requests first, so owners work while this rank samples its own nodes.
  std::vector<RpcRequest> requests;
  std::vector<int> owners;
  int64_t request_bytes = 0;
  for (int r = 0; r < static_cast<int>(remote_nodes.size()); ++r) {
    if (remote_nodes[r].empty()) continue;
    requests.push_back({r, encode_hop_request(request, remote_nodes[r], remote_times[r])});
    request_bytes += static_cast<int64_t>(requests.back().data.size());
    owners.push_back(r);
  }
  PARTITA_CHECK(requests.empty() || endpoint_ != nullptr, Error,
                "internal: remote nodes to sample without an endpoint");

  NeighborSample local_sample;
  std::vector<NeighborSample> host_samples(host_nodes.size());
  int64_t host_count = 0;
  // The owned nodes, then each mapped peer's with its own view (the owner's kernel input).
  auto sample_here = [&] {
    HopRequest local_request = request;
    local_request.frontier = local_nodes;
    local_request.times = local_times;
    local_.sample_hop(local_request, &local_sample);
    for (size_t r = 0; r < host_nodes.size(); ++r) {
      if (host_nodes[r].empty()) continue;
      HopRequest peer_request = request;
      peer_request.frontier = host_nodes[r];
      peer_request.times = host_times[r];
      peers_[r]->sample_hop(peer_request, &host_samples[r]);
      host_count += static_cast<int64_t>(host_nodes[r].size());
    }
  };
  std::vector<std::vector<uint8_t>> replies;
  if (requests.empty()) {
    sample_here();
  } else {
    // Send every request, sample the owned nodes while the owners serve them, then wait: no
    // thread of its own. (If local sampling throws, `pending` withdraws the call.)
    RpcEndpoint::Pending pending = endpoint_->start_all(std::move(requests));
    sample_here();
    replies = endpoint_->finish_all(std::move(pending));
  }

  // Every rank's answer (empty for ranks asked nothing), merged in frontier order.
  std::vector<HopReply> answers(remote_nodes.size());
  answers[self] = reply_view(local_sample);
  for (size_t r = 0; r < host_nodes.size(); ++r)
    if (!host_nodes[r].empty()) answers[r] = reply_view(host_samples[r]);
  int64_t reply_bytes = 0;
  for (size_t q = 0; q < replies.size(); ++q) {
    const int r = owners[q];
    answers[r] = decode_hop_reply(replies[q], r, static_cast<int64_t>(remote_nodes[r].size()),
                                  local_.options().edge_ids);
    reply_bytes += static_cast<int64_t>(replies[q].size());
  }
  merge_hop_replies(owner_of, answers, out);

  local_nodes_ += static_cast<int64_t>(local_nodes.size());
  remote_nodes_ += n - static_cast<int64_t>(local_nodes.size()) - host_count;
  host_nodes_ += host_count;
  remote_requests_ += static_cast<int64_t>(replies.size());
  remote_bytes_ += request_bytes + reply_bytes;
}

DistSamplerStats DistSampler::stats() const {
  return {local_nodes_.load(), remote_nodes_.load(), remote_requests_.load(), remote_bytes_.load(),
          host_nodes_.load()};
}

}  // namespace partita::sample
