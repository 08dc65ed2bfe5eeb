#pragma once
// The distributed NeighborSampler: one hop groups the frontier by owner rank, samples owned
// nodes in place, sends one request per remote owner (all in flight at once, comm/rpc.h)
// carrying the hop key and fanouts, and merges the answers (with their relations on a typed
// graph) in frontier order; the messages are in sample_wire.h. Every node is sampled by
// its owner with the kernel of neighbor_kernel.h on the owner's view, keyed by its ORIGINAL
// id, so a batch is identical for any number of ranks, including the single-process
// sampler on the unpartitioned graph (after mapping ids back through node_map).
//
// Serving side: add_sample_routes() registers the hop handler on every rank's router before
// its RpcEndpoint starts.
//
// Host-local sampling (set_host_parts, issue 23): nodes owned by a rank whose part is mapped
// here (same host, same directory: runtime/host_local.h) are sampled in this process, by
// the same kernel on the owner's view (owned_view of its part: same rows, same stream ids)
// with the same hop key and options, so the sample is bit-identical to the owner's reply; no
// request is sent.
//
// Temporal and weighted sampling (LocalSamplerOptions::temporal, ::weighting): owned_view
// carries the part's edge times and weights (DistGraph::edge_times, edge_weights: the
// partition's edge_time.npy and edge_weight.npy, in the part's CSC order), and each
// frontier node's time (HopRequest::times) goes with the node to whoever samples it: the
// owner's request (sample_wire.h), the local or a mapped peer's sampler. Every owner
// samples a node with the same kernel, row order and stream as the single-process sampler
// on the whole dataset, so temporal and weighted batches are identical for any number of
// ranks too. The options must be the same on every rank (add_sample_routes and
// DistSampler); check_sampling_data says whether a partition holds what they need.
//
// Edge ids (LocalSamplerOptions::edge_ids, the same on every rank): owned_view sets the
// part's first_edge (store::DistGraph::first_edge), each sampler and the serving route build
// the part's edge ids once, and every owner returns each sampled edge's global id next to
// its source (sample_wire.h), so NeighborSample::edge_ids too is identical for any number
// of ranks on one partition directory (an edge's id is its slot in the parts' concatenated
// CSC, not a dataset edge id: the single-process sampler on the unpartitioned graph numbers
// edges otherwise).
//
// Thread-safety: sample_hop may be called from several threads at once.
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "partita/comm/rpc.h"
#include "partita/comm/wire.h"
#include "partita/sample/csc_view.h"
#include "partita/sample/local_sampler.h"
#include "partita/sample/neighbor_sampler.h"
#include "partita/store/dist_graph.h"
#include "partita/store/host_parts.h"

namespace partita::sample {

// The view of a rank's owned rows, with streams keyed by original ids.
CscView owned_view(const store::DistGraph& graph);

// Throws ParameterError naming `temporal` when `options` sample temporally and the parts hold
// no edge_time, or neither node_time nor an edge split (seed times: node_time for the node
// task, the split's pair times for the link task; each task checks its own); naming
// `sample_weight` when `options` weight by edge_weight and the parts hold none; and as
// check_sampling_options. Typed partitions sample temporally as untyped ones do (each
// relation's run filtered by time: neighbor_kernel.h). A function of the metadata alone:
// every rank, clients of server-client mode included, gives the same verdict.
void check_sampling_data(const store::DistGraph& graph, const LocalSamplerOptions& options);

void add_sample_routes(RpcRouter& router, const store::DistGraph& graph,
                       const LocalSamplerOptions& options);

struct DistSamplerStats {
  int64_t local_nodes = 0;   // frontier nodes sampled in place
  int64_t remote_nodes = 0;  // frontier nodes sampled by their owners
  int64_t remote_requests = 0;
  int64_t remote_bytes = 0;  // request + reply payload bytes
  int64_t host_nodes = 0;    // frontier nodes of other ranks sampled here from their mapped parts
};

class DistSampler final : public NeighborSampler {
 public:
  // `endpoint` may be null when this rank owns every node (one rank, or replicated mode).
  // `options` must match the ones given to add_sample_routes on every rank.
  DistSampler(const store::DistGraph& graph, RpcEndpoint* endpoint,
              const LocalSamplerOptions& options);

  // Samples the nodes of the ranks whose parts `parts` maps here (null: none). Call it while
  // no sample_hop is in progress; `parts` must outlive its use.
  void set_host_parts(const store::HostParts* parts);

  void sample_hop(const HopRequest& request, NeighborSample* out) override;
  DistSamplerStats stats() const;
  // The options this rank samples with (the same on every rank).
  const LocalSamplerOptions& options() const { return local_.options(); }

 private:
  const store::DistGraph& graph_;
  RpcEndpoint* endpoint_;
  LocalSampler local_;
  std::vector<std::unique_ptr<LocalSampler>> peers_;  // by world rank, null: not mapped
  std::atomic<int64_t> local_nodes_{0}, remote_nodes_{0}, remote_requests_{0}, remote_bytes_{0},
      host_nodes_{0};
};

}  // namespace partita::sample
