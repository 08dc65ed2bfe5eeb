#pragma once
// Model adapters: the one interface through which the training loop (trainer.h) drives a
// model, whatever it is (GraphSAGE/GCN/GAT, R-GCN with learned embeddings, a link model).
//
// An adapter owns its torch module, built for a device and a precision (ModelContext): the
// module lives on context.device, and every batch tensor reaches it through the adapter's
// BatchStaging (train/batch_staging.h; on the CPU it copies nothing). Contract, per step:
//   set_dropout_key(key) -> forward(batch) -> [loss].backward() -> after_backward()
//   -> gradient allreduce -> after_gradient_sum() -> optimizer step.
// - forward(batch): the outputs of the batch's seeds, rows in seed order (node task: class
//   logits; link task: node embeddings), in train or eval mode as module() is; adds the
//   training step's matrix-product flops to *flops when given.
// - after_backward(): once after backward on a rank whose batch had seeds (R-GCN: pushes
//   the gradients of the embedding rows forward looked up to their owners).
// - after_gradient_sum(): on every rank after every step's gradient allreduce; may be
//   collective (R-GCN with embeddings: applies the pushed updates, then a barrier).
// - idle_training_step(): in a training step, on a rank whose batch has no seeds, in place
//   of forward, backward and after_backward: the collectives those make (HAN's semantic
//   score sums), with nothing to contribute. Models whose forward and backward make none
//   do nothing.
// - config_signature(): the model's shape and the optimizer kind, stored in checkpoints.
// Not thread-safe; one adapter per Trainer.
//
// A new model (or device) is one adapter file with a make function plus one entry in
// model_table() (model_table.cc); the training loop does not change.
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "partita/loader/batch_pipeline.h"
#include "partita/nn/gnn_model.h"
#include "partita/nn/link_model.h"
#include "partita/nn/precision.h"
#include "partita/runtime/session.h"
#include "partita/train/trainer.h"

namespace partita::store {
class ResidentRows;
}

namespace partita::train {

class BatchStaging;        // partita/train/batch_staging.h
class DeviceFeatureCache;  // device_feature_cache.h

struct ModelContext {
  runtime::Session& session;
  const TrainOptions& options;  // in_dim and out_dim resolved (the Trainer's copy)
  torch::Device device = torch::kCPU;
  nn::Precision precision = nn::Precision::kFp32;
};

class ModelAdapter {
 public:
  virtual ~ModelAdapter() = default;

  virtual torch::nn::Module& module() = 0;
  virtual torch::Tensor forward(loader::Batch& batch, double* flops = nullptr) = 0;
  virtual void set_dropout_key(uint64_t key) = 0;
  virtual std::vector<int64_t> config_signature() const = 0;
  virtual void after_backward() {}
  virtual void after_gradient_sum() {}
  virtual void idle_training_step() {}
  // Whether batches must carry the in-degrees of their nodes (GCN's normalization).
  virtual bool needs_degrees() const { return false; }
  // The homogeneous node model (GNN, or a link model's encoder), null otherwise: full-graph
  // inference and Trainer::model() use it.
  virtual nn::GnnModel* gnn() { return nullptr; }
  // The link model (encoder and decoder), null for node models.
  virtual nn::LinkModel* link() { return nullptr; }
  // How this model's inputs reach its device: tasks stage their labels and pair indices
  // through it (then ready()) so that losses and metrics are computed on the device.
  virtual BatchStaging& staging() = 0;
  // The device feature cache forward() assembles its inputs with (null: none); it must
  // outlive its use. Models without homogeneous features refuse one (Error).
  virtual void set_device_cache(const DeviceFeatureCache* cache);
  // The rows that cache holds, for the batch pipelines that feed this model
  // (loader::BatchPipelineOptions::resident), or null.
  virtual const store::ResidentRows* resident_rows() const { return nullptr; }
};

// One row of the factory table: the first entry whose accepts(options) holds builds the
// model. make throws UsageError/ParameterError when the model does not fit the session's
// graph or mode.
struct ModelEntry {
  const char* name;
  bool (*accepts)(const TrainOptions& options);
  std::unique_ptr<ModelAdapter> (*make)(const ModelContext& context);
};
const std::vector<ModelEntry>& model_table();

// The context the Trainer builds its model in: the device (options.device, train/device.h
// torch_device; "cuda" without an index is GPU 0) and precision `options` ask for.
ModelContext model_context(runtime::Session& session, const TrainOptions& options);

// Builds the model of `context` from the table with torch's generator seeded with
// options.seed, so every rank draws the same initial values (ranks that are threads of one
// process build one at a time), on the CPU, then moves its module to context.device (so
// that a GPU run starts from the CPU run's weights). Throws Error when no entry accepts the
// options, ParameterError(device) when the device cannot be used (check_device).
std::unique_ptr<ModelAdapter> build_model(const ModelContext& context);

// The adapters of the table (gnn_adapter.cc, rgcn_adapter.cc, han_adapter.cc, link_adapter.cc).
std::unique_ptr<ModelAdapter> make_gnn_adapter(const ModelContext& context);
std::unique_ptr<ModelAdapter> make_rgcn_adapter(const ModelContext& context);
std::unique_ptr<ModelAdapter> make_han_adapter(const ModelContext& context);
std::unique_ptr<ModelAdapter> make_link_adapter(const ModelContext& context);

}  // namespace partita::train
