#pragma once
// NeighborSampler over one CscView: the whole graph on a single machine, or the owned rows
// of a partition (then only owned nodes may be asked for).
//
// Ownership: borrows the view's arrays, which must outlive the sampler. With edge ids asked
// for and none in the view, the sampler builds and owns them (edge_id_range: 8 bytes per
// entry, once). Weighted (not temporal) sampling of an untyped view without weight
// summaries builds and owns them (weight_summaries: 12 bytes per row, once, here, before
// any sample_hop). sample_hop keeps no
// state between calls and may be called concurrently from several threads.
#include <cstdint>
#include <vector>

#include "partita/sample/csc_view.h"
#include "partita/sample/neighbor_kernel.h"
#include "partita/sample/neighbor_sampler.h"

namespace partita::sample {

struct LocalSamplerOptions {
  Replacement replacement = Replacement::kWithout;
  Weighting weighting = Weighting::kUniform;  // kEdgeWeight needs view.weights
  int threads = 1;                            // kernel threads per call; results do not change
  int64_t chunk = 2048;                       // nodes per parallel task; results do not change
  // Temporal sampling (neighbor_kernel.h): needs view.times, and HopRequest::times on every
  // request; kNone: requests must carry no times.
  Temporal temporal = Temporal::kNone;
  bool strict = false;  // temporal: an edge is allowed when its time < the node's (else <=)
  // Also return each sampled edge's global edge id (NeighborSample::edge_ids; the edge's
  // slot first_edge + position in the view). Off: samples and speed are as without it.
  bool edge_ids = false;
};

// Throws ParameterError naming `temporal_strategy` for Temporal::kRecent with
// Weighting::kEdgeWeight or Replacement::kWith (recent takes the k latest allowed edges: there
// is no draw to weight or repeat). Pure: a front end calls it before anything starts.
void check_sampling_options(const LocalSamplerOptions& options);

class LocalSampler final : public NeighborSampler {
 public:
  // Validates the view (O(rows)); throws partita::Error if it is inconsistent, if
  // kEdgeWeight is asked without weights, or temporal sampling without edge times (a view
  // without entries needs neither).
  LocalSampler(const CscView& view, const LocalSamplerOptions& options);

  void sample_hop(const HopRequest& request, NeighborSample* out) override;

  const CscView& view() const { return view_; }
  const LocalSamplerOptions& options() const { return options_; }

 private:
  CscView view_;
  LocalSamplerOptions options_;
  std::vector<int64_t> edge_ids_;                // view_.edge_ids when built here
  std::vector<WeightSummary> weight_summaries_;  // view_.weight_summaries when built here
};

}  // namespace partita::sample
