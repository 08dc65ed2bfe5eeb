#pragma once
// One hop of sampling behind a small interface: the block builder asks for the sampled
// in-neighbors of a frontier and does not know where they come from. LocalSampler
// (local_sampler.h) reads one CscView; the distributed sampler groups the frontier by
// owner, samples owned nodes in place, sends one request per remote owner carrying the
// hop key, and merges the answers in frontier order.
//
// Contract for every implementation: for each frontier node, the result is exactly what
// sample_neighbors (neighbor_kernel.h) returns for it on the view that owns it, with
// `hop_key`, `fanout`, `relation_fanouts` and (temporal) its time of the request and the
// implementation's sampling mode. Hence a batch is identical whichever implementation,
// rank count or thread count produced it.
#include <cstdint>

#include "partita/core/array_view.h"
#include "partita/sample/neighbor_kernel.h"

namespace partita::sample {

struct HopRequest {
  ArrayView<const int64_t> frontier;  // global ids; borrowed for the duration of the call
  int hop = 0;                        // 0-based; hop 0 samples around the seeds
  uint64_t hop_key = 0;               // hop_key(batch key, hop), sample_key.h
  int64_t fanout = -1;                // k >= 0, or -1 for every neighbor
  // Typed graphs: the fanout of each relation (indexed by relation id); empty: `fanout`
  // for every relation. Borrowed for the duration of the call.
  ArrayView<const int64_t> relation_fanouts;
  // Temporal sampling: the time of each frontier node (neighbor_kernel.h), borrowed for the
  // duration of the call; empty otherwise.
  ArrayView<const int64_t> times;
};

class NeighborSampler {
 public:
  virtual ~NeighborSampler() = default;
  // Replaces out->counts (one per frontier node, frontier order), out->neighbors (global
  // ids, CSR-like) and out->relations (typed graphs; else empty). May block (a remote
  // implementation waits for its owners, bounded by its timeout). Throws partita::Error on
  // a node no one owns.
  virtual void sample_hop(const HopRequest& request, NeighborSample* out) = 0;
};

}  // namespace partita::sample
