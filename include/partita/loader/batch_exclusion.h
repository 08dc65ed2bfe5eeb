#pragma once
// Link steps remove their pairs' edges from a fetched batch (sample/edge_exclusion.h, DGL's
// exclude='self' / 'reverse_id'): the blocks, the input nodes' degrees (GCN) and, when the
// batch carries them, the edge features of the removed edges. The C++ link task
// (train/link_task.cc) and the Python link loader both call this.
#include <cstdint>

#include "partita/core/array_view.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/sample/edge_exclusion.h"

namespace partita::loader {

// sample::exclude_edges on batch.sampled (lowering batch.degrees when fetched), then, when
// batch.edge_features holds one row per block edge (BatchPipelineOptions::
// edge_feature_row_bytes), drops the rows of the removed edges so that the rows stay
// aligned with the blocks' edges: each block keeps a subsequence of its edges in order, so
// its k-th kept edge takes the row of its next sampled edge with the same id (equal ids,
// equal rows). Returns the number of block edges removed. Throws partita::Error as
// sample::exclude_edges does, and when a kept edge's id is not among the block's sampled
// ones (a broken batch).
int64_t exclude_batch_edges(Batch& batch, ArrayView<const int64_t> pairs, sample::Exclude mode);

}  // namespace partita::loader
