#pragma once
// The learned embedding tables' files beside a checkpoint (private to train/; the format is
// trainer_embeddings.cc's). Both calls are collective over the session's trainers and agreed
// (checkpoint.h, run_agreed): every rank learns whether every file was written or read.
#include <cstdint>
#include <string>

#include "partita/runtime/session.h"

namespace partita::train {

// Writes the rows (and optimizer state) each owner rank holds for checkpoint `epochs_done`
// in `dir`; nothing when the session has no embedding table.
void save_embeddings(runtime::Session& session, const std::string& dir, int64_t epochs_done);
// Reads them back into the session's tables.
void restore_embeddings(runtime::Session& session, const std::string& dir, int64_t epochs_done);

}  // namespace partita::train
