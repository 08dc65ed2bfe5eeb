#pragma once
// Training tasks: what the training loop (trainer.h) trains the model to do. NodeTask
// classifies nodes (cross-entropy over labels, accuracy); LinkTask scores node pairs
// (binary cross-entropy over positives and corrupted negatives; AUC, AP, MRR, Hits@K).
//
// Contract (see trainer.h, "Batches", "Evaluation", "Link prediction"):
// - The constructor is collective (it gathers every rank's ids or pairs: the global plan);
//   every rank builds the same task with the same options.
// - plan(): every training id (or pair) of the job cut into global steps, the same on every
//   rank. epoch_seeds(e): this rank's seeds of every step of epoch e (0-based), keyed by
//   (seed, e) so every rank agrees on the steps.
// - step_loss(): on a batch with seeds only, no collective, no host read of device data: the
//   step's loss (summed over this rank's seeds, divided by the global step's size, so the
//   gradients' allreduce gives the exact mean) and the classified-right count, both left on
//   the model's device.
// - validate(), test(): collective; `tag` keys the sampling apart from training epochs;
//   weights_version changes whenever the weights do (a task may cache per version).
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <vector>

#include "partita/loader/batch_pipeline.h"
#include "partita/loader/seeds.h"
#include "partita/runtime/session.h"
#include "partita/train/model_adapter.h"
#include "partita/train/trainer.h"

namespace partita::train {

struct StepLoss {
  torch::Tensor loss;     // scalar, with grad
  torch::Tensor correct;  // int64 scalar on the model's device: never read here
  int64_t total = 0;
};

class TrainTask {
 public:
  virtual ~TrainTask() = default;

  virtual const loader::GlobalBatches& plan() const = 0;
  virtual std::vector<std::vector<int64_t>> epoch_seeds(int64_t epoch) = 0;
  // Called after epoch_seeds: the times of each step's seeds when they are not node times
  // (the temporal link task's: loader::BatchPipelineOptions::seed_times), else empty.
  virtual std::vector<std::vector<int64_t>> epoch_seed_times() { return {}; }
  // Whether batches carry the labels of their seeds.
  virtual bool needs_labels() const = 0;
  // step: 0-based within the epoch; global_batch: the global step's seeds (plan().batch_size).
  virtual StepLoss step_loss(loader::Batch& batch, int64_t step, int64_t global_batch,
                             ModelAdapter& model, double* flops) = 0;
  // The validation figure: accuracy, or the link task's chosen metric.
  virtual double validate(ModelAdapter& model, uint64_t tag, int64_t weights_version) = 0;
  // The test figures into result (test_acc, or test_link).
  virtual void test(ModelAdapter& model, uint64_t tag, int64_t weights_version,
                    TrainResult& result) = 0;
  // The sampler of every pass (training, cache warm-up, sampled evaluation): the session's,
  // or for model han its MetapathSampler (train/metapaths.h).
  virtual sample::NeighborSampler& sampler() = 0;
  // What builds the blocks of every pass instead of sampler() (train/device_sampling.h:
  // on the model's device), or null: sampler() on the host.
  virtual loader::BlockSource* block_source() { return nullptr; }
};

// The batch pipeline of a pass over `session` keyed by `epoch_key` (training epoch or tag)
// that feeds `model`: its degrees when it needs them, without the rows it holds on its device
// (ModelAdapter::resident_rows), the feature rows gathered into the memory its staging copies
// from (BatchStaging::feature_memory); `source`: the task's block_source() (null: the
// host sampler).
loader::BatchPipelineOptions pipeline_options(runtime::Session& session,
                                              const TrainOptions& options, ModelAdapter& model,
                                              bool needs_labels, uint64_t epoch_key,
                                              loader::BlockSource* source = nullptr);

// The same from the facts it takes from the model, for a pipeline that feeds no ModelAdapter
// (a Python loader): `needs_degrees` (ModelAdapter::needs_degrees), `resident`
// (resident_rows; null: every input row fetched), `source` (as above) and `feature_memory`
// (BatchStaging::feature_memory; null: the default resource). The form above calls this one.
loader::BatchPipelineOptions pipeline_options(runtime::Session& session,
                                              const TrainOptions& options, bool needs_degrees,
                                              bool needs_labels, uint64_t epoch_key,
                                              const store::ResidentRows* resident = nullptr,
                                              loader::BlockSource* source = nullptr,
                                              std::pmr::memory_resource* feature_memory = nullptr);

// Throws ParameterError(temporal) when `session` samples temporally (its sampler's options)
// and its partition holds no node times: a node task's seeds sample at their node_time (a
// partition split by time passes sample::check_sampling_data without them, for the link
// task). The node task's constructor checks it; so does any other pass over node seeds.
void check_node_seed_times(const runtime::Session& session);

// options.task's task (collective, see above). `options` must outlive the task.
std::unique_ptr<TrainTask> make_task(runtime::Session& session, const TrainOptions& options);
std::unique_ptr<TrainTask> make_node_task(runtime::Session& session, const TrainOptions& options);
std::unique_ptr<TrainTask> make_link_task(runtime::Session& session, const TrainOptions& options);

}  // namespace partita::train
