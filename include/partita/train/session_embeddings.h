#pragma once
// The learned embedding tables a training run needs from its session
// (runtime::SessionOptions::embeddings and embedded_types; store/dist_embedding.h), set before
// the session is built: rows `hidden` wide, keyed by `seed`, trained by the sparse form of
// `optimizer` at `embed_lr` (0: 2 x `lr`), starting uniform in [-`embed_init`, `embed_init`).
// Model rgcn reads every node type: a table per featureless type. Model han reads the labelled
// type only (metapath blocks hold target nodes): a table for it when it has no features, none
// for the other types. Other models: none.
#include "partita/runtime/session.h"
#include "partita/train/train_options.h"

namespace partita::train {

void set_session_embeddings(const TrainOptions& options, runtime::SessionOptions* session);

}  // namespace partita::train
