#pragma once
// Internal to src/sample: temporal sampling (the contract is in neighbor_kernel.h), called
// by sample_neighbors when options.temporal is not kNone.
#include <cstdint>

#include "partita/core/array_view.h"
#include "partita/sample/csc_view.h"
#include "partita/sample/neighbor_kernel.h"

namespace partita::sample::detail {

// Checks the temporal options against the view and node times (partita::Error), then
// samples `nodes` at `node_times` into `out`.
void sample_temporal(const CscView& view, ArrayView<const int64_t> nodes,
                     ArrayView<const int64_t> node_times, uint64_t hop_key,
                     const KernelOptions& options, NeighborSample* out);

}  // namespace partita::sample::detail
