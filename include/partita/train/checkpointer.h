#pragma once
// The training loop's checkpoints (trainer.h, "Checkpoints"; the file format is
// checkpoint.h's). Only rank 0 reads or writes checkpoint files, so the directory need not
// be shared between hosts; each owner of learned embeddings has its own file beside them.
// Every call is collective over the session's trainers and agreed: all ranks return, or
// all throw.
// - save(E): the embedding files first, then rank 0 writes checkpoint E (model, optimizer,
//   E, seed, signature, recorded settings) and keeps the two latest.
// - refuse_existing(): ParameterError(checkpoint_dir) on every rank when the directory
//   already holds a checkpoint (a fresh run would mix its files with another run's).
// - restore(): the latest checkpoint, read by rank 0 and broadcast, loaded after a
//   signature check (ParameterError(resume) on another model or optimizer); returns its
//   epochs done, 0 when there is none.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "partita/runtime/session.h"
#include "partita/train/trainer.h"

namespace partita::train {

class Checkpointer {
 public:
  // options.checkpoint (dir, settings) and seed are read; `options` must outlive the
  // checkpointer.
  Checkpointer(runtime::Session& session, const TrainOptions& options);

  bool enabled() const { return !options_.checkpoint.dir.empty(); }
  void save(int64_t epochs_done, torch::nn::Module& module, torch::optim::Optimizer& optimizer,
            const std::vector<int64_t>& signature);
  void refuse_existing();
  int64_t restore(torch::nn::Module& module, torch::optim::Optimizer& optimizer,
                  const std::vector<int64_t>& signature);

 private:
  runtime::Session& session_;
  const TrainOptions& options_;
};

}  // namespace partita::train
