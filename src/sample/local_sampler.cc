#include "partita/sample/local_sampler.h"

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"

namespace partita::sample {

void check_sampling_options(const LocalSamplerOptions& options) {
  if (options.temporal != Temporal::kRecent) return;
  PARTITA_CHECK_PARAM(options.weighting == Weighting::kUniform, "temporal_strategy",
                      "recent takes the latest allowed edges, with no draw to weight: drop "
                      "`sample_weight` or use `temporal_strategy` uniform");
  PARTITA_CHECK_PARAM(options.replacement == Replacement::kWithout, "temporal_strategy",
                      "recent takes the latest allowed edges, each once: it samples without "
                      "replacement only");
}

LocalSampler::LocalSampler(const CscView& view, const LocalSamplerOptions& options)
    : view_(view), options_(options) {
  if (options_.edge_ids && view_.edge_ids.empty()) {
    edge_ids_ = edge_id_range(view_);
    view_.edge_ids = edge_ids_;
  }
  validate(view_, "local sampler");
  // Weighted sampling of untyped rows reads each row's summary instead of its weights.
  if (options_.weighting == Weighting::kEdgeWeight && options_.temporal == Temporal::kNone &&
      view_.weighted() && !view_.typed() && view_.weight_summaries.empty()) {
    weight_summaries_ = weight_summaries(view_, options_.threads);
    view_.weight_summaries = weight_summaries_;
  }
  // A view without entries (a server-client trainer's, which owns nothing) needs neither.
  PARTITA_CHECK(
      options_.weighting != Weighting::kEdgeWeight || view_.weighted() || view_.indices.empty(),
      Error, "local sampler: weighted sampling asked of a graph without edge weights");
  PARTITA_CHECK(options_.temporal == Temporal::kNone || view_.timed() || view_.indices.empty(),
                Error, "local sampler: temporal sampling asked of a graph without edge times");
}

void LocalSampler::sample_hop(const HopRequest& request, NeighborSample* out) {
  KernelOptions kernel;
  kernel.fanout = request.fanout;
  kernel.relation_fanouts = request.relation_fanouts;
  kernel.replacement = options_.replacement;
  // A view without entries (a server-client trainer's) samples nothing whatever the
  // weighting; its weights are the empty array, which the kernel would refuse for kEdgeWeight.
  kernel.weighting = view_.indices.empty() ? Weighting::kUniform : options_.weighting;
  kernel.threads = options_.threads;
  kernel.chunk = options_.chunk;
  kernel.temporal = options_.temporal;
  kernel.strict = options_.strict;
  kernel.edge_ids = options_.edge_ids;
  sample_neighbors(view_, request.frontier, request.times, request.hop_key, kernel, out);
}

}  // namespace partita::sample
