#pragma once
// The R-GCN inputs of a batch of a typed graph (private to train/): per node type, the rows
// of its input nodes, as features or as learned embedding rows (runtime::Session's tables),
// and the sparse updates of those rows after backward.
//
// Embedding contract (store/dist_embedding.h, per step): every trainer looks its rows up
// (typed_inputs), runs forward/backward, pushes its rows' gradients
// (push_embedding_gradients), then the gradient allreduce (a barrier) lets every push
// arrive, then apply_embedding_updates applies them on their owners and ends with a barrier
// so no rank's next lookup sees a table half updated.
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "partita/loader/batch_pipeline.h"
#include "partita/nn/rgcn.h"
#include "partita/runtime/session.h"

namespace partita::train {
class BatchStaging;
}  // namespace partita::train

namespace partita::train {

struct TypedBatchInputs {
  std::vector<nn::RgcnInput> inputs;  // one per node type
  // The types whose rows are learned embeddings, each with the global ids of its rows (in
  // the order of inputs[type].x's rows).
  std::vector<int> embedded_types;
  std::vector<std::vector<int64_t>> embedded_ids;
};

// Builds the inputs of `batch` (fetched with BatchPipelineOptions::typed) on staging's device
// (batch_staging.h; call its ready() before use). Features are widened to float32 and, with
// `normalize`, row-normalized (nn: as --normalize-features). Embedding rows are looked up
// now on the host and moved to the device; with `training` the device rows are leaf tensors
// that require grad (push_embedding_gradients brings their gradients back to the host).
// Throws Error when a featureless type with input nodes in the batch has no embedding table
// in the session (a type without any gets empty positions and an undefined x).
TypedBatchInputs typed_inputs(loader::Batch& batch, runtime::Session& session, bool training,
                              bool normalize, BatchStaging& staging);

// Sends the gradients of the batch's embedding rows to their owners (after backward).
void push_embedding_gradients(const TypedBatchInputs& inputs, runtime::Session& session);

// Applies every pushed gradient on its owner, then a barrier among the trainers (see the
// contract above). Call on every trainer after the gradient allreduce of every step.
void apply_embedding_updates(runtime::Session& session);

// Whether the session holds any embedding table.
bool has_embeddings(runtime::Session& session);

}  // namespace partita::train
