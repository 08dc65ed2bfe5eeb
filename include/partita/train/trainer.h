#pragma once
// Data-parallel mini-batch training of a GnnModel on one rank of a DistSession (DESIGN 7).
//
// Every rank holds the whole model. Initial weights are identical on every rank: torch is
// seeded with options.seed before the model is built (same values everywhere), and then,
// since Collectives has no broadcast, rank != 0 zeroes its parameters and all ranks
// allreduce-sum them, which leaves rank 0's values on every rank.
//
// Per epoch: this rank's train ids (its owned ones, or an even share in replicated mode)
// are shuffled with loader::epoch_seeds; the step count is the max of steps_per_epoch over
// ranks, agreed with one collective before the epoch, so every rank runs the same number
// of steps (a rank with fewer seeds wraps, loader::batch_seeds). Each step: forward,
// cross-entropy, backward, then gradients are averaged with ONE allreduce over a flat
// buffer of all gradients (no bucketing yet), then the optimizer steps.
//
// Evaluation is distributed the same way: each rank classifies its own ids in batches with
// the training fanouts (eval mode, no grad) and the correct/total counts are summed with
// one allreduce at the end, so ranks may run different numbers of eval batches.
//
// Collective contract: train(), evaluate() and parameter_checksum() are collective; every
// rank of the session must call them in the same order with the same options.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/loader/dist_session.h"
#include "partita/nn/gnn_model.h"

namespace partita::train {

enum class OptimizerKind { kAdam, kSgd };

struct TrainOptions {
  nn::GnnOptions model;  // in_dim / out_dim <= 0: taken from the graph
  double lr = 0.003;
  double weight_decay = 0;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  int64_t epochs = 5;                    // >= 1
  int64_t batch_size = 512;              // >= 1
  std::vector<int64_t> fanouts{10, 10};  // one per layer; -1 = all neighbors
  uint64_t seed = 0;
  int threads = 1;        // sampler threads of the batch pipeline, >= 1
  int prefetch = 2;       // batches ahead, >= 1
  int torch_threads = 1;  // torch intra-op threads (DESIGN 10: cores per rank), >= 1
  // Row-normalize input features (each row divided by its sum; all-zero rows stay zero),
  // as in the GCN paper's preprocessing.
  bool normalize_features = false;
};

// Figures of one epoch, identical on every rank (reduced) except the timings, which are
// this rank's. loss: mean over steps, averaged across ranks.
struct EpochRecord {
  int64_t epoch = 0;
  int64_t steps = 0;
  double loss = 0;
  double train_acc = 0;    // on the training batches of the epoch, while training
  double val_acc = 0;      // after the epoch; 0 when there are no valid ids
  double epoch_s = 0;      // wall time of the epoch (training steps only)
  double sample_s = 0;     // sampler-thread time building blocks (summed over steps)
  double fetch_s = 0;      // sampler-thread time fetching features and labels
  double compute_s = 0;    // forward + backward + optimizer step
  double allreduce_s = 0;  // gradient averaging
  double wait_s = 0;       // waiting for the next batch from the pipeline
  double eval_s = 0;       // validation
};

struct TrainResult {
  std::vector<EpochRecord> epochs;
  double test_acc = 0;
};

class Trainer {
 public:
  // Builds the model and optimizer and synchronizes the initial weights (collective).
  // Throws Error/UsageError on bad options (fanouts.size() != model.layers, ...).
  Trainer(loader::DistSession& session, const TrainOptions& options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Runs options.epochs epochs, calling on_epoch after each (on every rank), then measures
  // test accuracy. Throws Error if a rank has no train ids.
  TrainResult train(const std::function<void(const EpochRecord&)>& on_epoch = {});

  // Exact accuracy over the union of every rank's `ids` (this rank passes its own);
  // 0 when the union is empty. `tag` distinguishes the sampling key from training epochs.
  double evaluate(ArrayView<const int64_t> ids, uint64_t tag);

  // A fingerprint of all parameters (sum of value * (1 + flat index % 7), in double) to
  // compare ranks' weights. Local (no collective).
  double parameter_checksum() const;

  nn::GnnModel& model() { return *model_; }

 private:
  struct Impl;
  // This rank's ids of a split: owned ids, or an even share in replicated mode.
  std::vector<int64_t> local_ids(ArrayView<const int64_t> ids) const;
  EpochRecord run_epoch(int64_t epoch);
  void sync_initial_weights();
  void average_gradients();

  loader::DistSession& session_;
  TrainOptions options_;
  std::shared_ptr<nn::GnnModel> model_;
  std::unique_ptr<Impl> impl_;  // optimizer
};

}  // namespace partita::train
