// The training loop's checkpoints: see partita/train/checkpointer.h.
#include "partita/train/checkpointer.h"

#include <exception>
#include <optional>

#include "embedding_files.h"
#include "partita/core/log.h"
#include "partita/core/parameter_error.h"
#include "partita/train/checkpoint.h"

namespace partita::train {
namespace {
constexpr int kCheckpointsKept = 2;
}  // namespace

Checkpointer::Checkpointer(runtime::Session& session, const TrainOptions& options)
    : session_(session), options_(options) {}

void Checkpointer::save(int64_t epochs_done, torch::nn::Module& module,
                        torch::optim::Optimizer& optimizer, const std::vector<int64_t>& signature) {
  const std::string path = checkpoint_path(options_.checkpoint.dir, epochs_done);
  // The embeddings first: a checkpoint file implies its embeddings are there too.
  save_embeddings(session_, options_.checkpoint.dir, epochs_done);
  // Every rank learns the outcome, so no rank goes on while rank 0 fails.
  run_agreed(
      session_.collectives(), fmt::format("rank 0 could not write checkpoint {}", path), [&] {
        if (session_.rank() != 0) return;
        CheckpointMeta meta{epochs_done, options_.seed, signature, options_.checkpoint.settings};
        write_file_atomic(path, serialize_checkpoint(module, optimizer, meta));
        prune_checkpoints(options_.checkpoint.dir, kCheckpointsKept);
      });
}

void Checkpointer::refuse_existing() {
  // found: 1 = the directory holds a checkpoint, -1 = rank 0 could not look.
  int64_t found = 0;
  std::string latest;
  std::exception_ptr error;
  if (session_.rank() == 0) {
    try {
      if (std::optional<std::string> path = latest_checkpoint(options_.checkpoint.dir)) {
        found = 1;
        latest = *path;
      }
    } catch (...) {
      error = std::current_exception();
      found = -1;
    }
  }
  session_.collectives().broadcast(&found, 1, 0);
  if (error) std::rethrow_exception(error);
  PARTITA_CHECK(found >= 0, Error, "rank 0 could not list {}", options_.checkpoint.dir);
  PARTITA_CHECK_PARAM(found == 0, "checkpoint_dir",
                      "{} already holds checkpoints{}: pass `resume` to continue from the "
                      "latest, or choose another directory",
                      options_.checkpoint.dir, latest.empty() ? "" : " (" + latest + ")");
}

int64_t Checkpointer::restore(torch::nn::Module& module, torch::optim::Optimizer& optimizer,
                              const std::vector<int64_t>& signature) {
  const SharedCheckpoint checkpoint =
      broadcast_latest_checkpoint(session_.collectives(), options_.checkpoint.dir);
  if (!checkpoint.found) {
    if (session_.rank() == 0)
      log_notice("no checkpoint in {}: starting from epoch 1", options_.checkpoint.dir);
    return 0;
  }
  const std::string& bytes = checkpoint.bytes;
  const std::string& source = checkpoint.source;
  const CheckpointMeta meta = read_checkpoint_meta(bytes, source);
  PARTITA_CHECK_PARAM(meta.signature == signature, "resume",
                      "{} was written for another model or optimizer (`model`, `layers`, "
                      "`hidden`, `heads`, `optimizer`, edge features or the dataset differ)",
                      source);
  load_checkpoint(bytes, source, module, optimizer);
  restore_embeddings(session_, options_.checkpoint.dir, meta.epochs_done);
  // Nothing left to train (epochs_done >= epochs) is the caller's to report, in its words
  // (TrainResult::resumed_epochs).
  if (session_.rank() == 0) log_info("resuming from {} ({} epochs done)", source, meta.epochs_done);
  return meta.epochs_done;
}

}  // namespace partita::train
