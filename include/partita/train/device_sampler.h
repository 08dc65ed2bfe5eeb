#pragma once
// Neighbour sampling and block building on a torch device (issue 38): the graph's whole
// in-edge CSC resident on the device (DeviceTopology), and DeviceSampler, which samples a
// batch hop by hop there and builds its blocks there (nn::BlockTensors), so that no index
// array passes through host memory. Written in device-generic torch ops: the same code runs
// on the CPU (`train --sample-on device --device cpu`), where it is tested.
//
// Contract: the host pipeline's, bit for bit. For every frontier node the sample is what
// sample::sample_neighbors (neighbor_kernel.h) returns for it in the uniform mode without
// replacement: the same per-node (typed: per node and relation) streams of sample_key.h
// keyed by the views' stream ids, Floyd's algorithm with the same draws and decisions (here
// evaluated for all nodes at once: draws and duplicate tests in parallel, the chains of
// "taken already" resolved by pointer jumping), positions in stored order, runs in relation
// order. Blocks are then built as sample::BlockBuilder builds them (src nodes: the dst nodes
// first, then new nodes in order of first appearance in the sampled list) and converted as
// nn::to_block_tensors converts them: every field of every block equals the host
// pipeline's. So a batch does not depend on where it was sampled, and neither do losses on
// the CPU. Edge ids (DeviceSampleOptions::edge_ids): each pick's global edge id
// (sample::CscView::first_edge + its position in its view), so DeviceSample::edge_ids equals
// the host blocks' sample::Block::edge_ids. (Sampling with replacement exists on the host
// only.)
//
// Weighted (DeviceSampleOptions::weighted, `--sample-weight edge_weight`): the same
// distribution as the host kernel's weighted sampling without replacement (successive
// sampling: k distinct in-neighbours, each next one drawn with probability proportional to
// its weight among those not taken), but not the same picks: the host takes rejection for
// flat rows, the device Efraimidis-Spirakis for every row: entry i of a (node, relation)
// run gets the key -log(u) / w_i, u in (0, 1] from draw i of the run's stream (the host's
// keys, sample/row_algorithms.h), and the run's k smallest keys are its picks (ties: the
// earlier entry), in stored order. Entries of weight <= 0, infinite or NaN are never
// picked; a run with at most k positive entries (or fanout -1) gives every positive one.
// Reruns for a key on one device are identical bit for bit; blocks are built from the picks
// as above. Host reads: one more per hop (its entry count, which sizes the keys).
//
// Temporal (DeviceSampleOptions::temporal, `--temporal`): the host pipeline's temporal
// blocks (sample::BlockBuilder with seed times; temporal_kernel.cc), bit for bit. A frontier
// entry is a (node, time) pair: the seeds at their times, each pick at the time of the entry
// it was drawn for; relabelling numbers distinct pairs by first appearance, so one node
// reached at two times is two src entries. A run keeps the entries whose time is <= the
// entry's time (strict: <), in stored order; uniform: Floyd over those m entries with the
// run's stream (all of them when m <= k), as above with d = m; recent: the k latest of them
// (ties: the earlier entry), in stored order. DeviceSample::input_times holds every src
// entry's time (sample::Block::src_times). Host reads: one more per hop (its entry count).
//
// Temporal and weighted (uniform strategy only; the host refuses recent with weights):
// Efraimidis-Spirakis as above over a run's allowed entries only, which is the host's
// temporal weighted distribution (its weighted sampling of the run filtered by time): the
// i-th allowed entry takes draw i of the run's stream, entries the time excludes are never
// picked. So, as weighted alone, the host's distribution and not its picks; src times and
// relabelling as temporal alone. Host reads: one more per hop (its entry count).
//
// Host synchronisation: one small device-to-host read per hop (the hop's edge and node
// counts, and on a typed graph its relation-row counts, in one copy), which sizes the
// hop's outputs; one more per hop whose fanout is -1 (all neighbours: the slot count), or
// per hop when weighted or temporal (the frontier's entry count).
// Nothing else reads device memory on the host (no nonzero, unique, item or masked_select).
// A profiler sees each read as the scope kHostReadScope.
//
// Thread-safety: DeviceTopology is immutable after construction; DeviceSampler::sample may
// be called from several threads at once (it keeps no state). Work is issued on the
// calling thread's current stream of the device.
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "partita/nn/block_tensors.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/csc_view.h"

namespace partita::train {

// The record_function scope of each of DeviceSampler's host reads.
inline constexpr const char* kHostReadScope = "partita::device_sampler_host_read";

// The whole graph's in-edges on one device. Rows are (node, relation) runs: run v * R + r
// holds node v's in-edges of relation r (R = 1 on an untyped graph), in stored order.
class DeviceTopology {
 public:
  // `views`: rows covering [0, N) contiguously, in order (runtime::Session::topology_views;
  // one view of the whole graph on a single machine); typed views carry relations, ids in
  // [0, num_relations). Copies them to `device` (the CPU: no copy where the arrays can be
  // used as they are). Throws Error when the views do not cover [0, N) in order, when typed
  // and untyped views mix, on a relation id out of range, or on a run of 2^31 entries or
  // more (Floyd's draws need fewer). `weights`: also hold the views' edge weights (for
  // DeviceSampleOptions::weighted; Error when a view with entries has none). `times`: also
  // hold the views' edge times (for DeviceSampleOptions::temporal; Error likewise).
  DeviceTopology(const std::vector<sample::CscView>& views, int num_relations, torch::Device device,
                 bool weights = false, bool times = false);

  const torch::Device& device() const { return device_; }
  int64_t num_nodes() const { return num_nodes_; }
  int64_t num_edges() const { return num_edges_; }
  bool typed() const { return typed_; }
  int64_t num_relations() const { return relations_; }  // R: 1 when untyped
  // Bytes the topology holds on its device (0 for the arrays used in place on the CPU).
  int64_t device_bytes() const { return device_bytes_; }

  const torch::Tensor& run_ptr() const { return run_ptr_; }  // [N * R + 1] int64 offsets
  // [E] global source ids: int32 when N < 2^31 and the device is not the CPU, else int64.
  const torch::Tensor& indices() const { return indices_; }
  const torch::Tensor& stream_ids() const { return stream_ids_; }  // [N] int64
  // [E] float32 edge weights aligned with indices(), when constructed with `weights`;
  // undefined otherwise.
  const torch::Tensor& weights() const { return weights_; }
  bool weighted() const { return weights_.defined(); }
  // [E] int64 edge times aligned with indices(), when constructed with `times`; undefined
  // otherwise.
  const torch::Tensor& times() const { return times_; }
  bool timed() const { return times_.defined(); }
  // The global edge ids (sample::CscView::first_edge + the entry's position in its view) of
  // entries at positions `entries` of indices() whose rows are `nodes` (aligned, int64):
  // position + a per-view shift (one add; an index_select by node only when the views'
  // shifts differ).
  torch::Tensor edge_ids(const torch::Tensor& entries, const torch::Tensor& nodes) const;

 private:
  torch::Device device_;
  int64_t num_nodes_ = 0;
  int64_t num_edges_ = 0;
  bool typed_ = false;
  int64_t relations_ = 1;
  int64_t device_bytes_ = 0;
  torch::Tensor run_ptr_, indices_, stream_ids_, weights_, times_;
  // Edge id - position in indices(): edge_shift_ for every row, or per row ([N] int64,
  // defined only when the views' shifts differ).
  int64_t edge_shift_ = 0;
  torch::Tensor row_edge_shift_;
};

// A sampled batch on the device.
struct DeviceSample {
  // Hop order, as sample::SampledBatch::blocks (blocks[0].dst = the seeds), every field as
  // nn::to_block_tensors gives it (typed graphs: with the relation fields); graph_deg set
  // when asked for (views of one tensor).
  std::vector<nn::BlockTensors> blocks;
  // [blocks.back().num_src] int64 global ids: the seeds, then each hop's new nodes; block
  // i's src nodes are its first blocks[i].num_src entries. The seeds when there is no hop.
  torch::Tensor input_nodes;
  // Temporal: [input_nodes.numel()] int64, the time of each src entry (block i's src times
  // are its first blocks[i].num_src entries: sample::Block::src_times); undefined otherwise.
  torch::Tensor input_times;
  int64_t num_edges = 0;  // of every block
  int host_reads = 0;     // device-to-host reads this batch made (see above)
  // With DeviceSampleOptions::edge_ids: [num_edges] int64, the global edge id of every
  // block's edges (block 0's first, each block's in the order of its indices), what
  // sample::Block::edge_ids holds in the host pipeline; undefined otherwise.
  torch::Tensor edge_ids;
};

struct DeviceSampleOptions {
  // Set every block's graph_deg: the whole-graph in-degree of its src nodes (GCN).
  bool degrees = false;
  // Set DeviceSample::edge_ids (no host read: the ids are derived from the picks' positions).
  bool edge_ids = false;
  // Weighted sampling without replacement (sample::Weighting::kEdgeWeight; the topology must
  // hold weights: Error otherwise). See the header for what it equals.
  bool weighted = false;
  // Temporal sampling (sample::Temporal::kUniform or kRecent; kUniform only with weighted;
  // the topology must hold times: Error otherwise) with seed_times, [n] int64 on the device, one
  // per seed; strict: an edge is allowed when its time is < the entry's (else <=). See the header.
  sample::Temporal temporal = sample::Temporal::kNone;
  bool strict = false;
  torch::Tensor seed_times;
};

class DeviceSampler {
 public:
  // Borrows `topology`, which must outlive the sampler.
  explicit DeviceSampler(const DeviceTopology& topology) : topology_(topology) {}

  // Samples the blocks of `seeds` (int64 global ids on the topology's device, distinct, or
  // temporal distinct (seed, time) pairs: not checked here, that would cost a host read) under
  // options.key with options.fanouts. Throws Error on a fanout < -1, per-relation fanouts whose
  // size is not the hop count or (on a hop that gives them) not the relation count.
  DeviceSample sample(const torch::Tensor& seeds, const sample::BlockOptions& options,
                      const DeviceSampleOptions& sample_options = {}) const;

  const DeviceTopology& topology() const { return topology_; }

 private:
  const DeviceTopology& topology_;
};

}  // namespace partita::train
