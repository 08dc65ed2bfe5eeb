#pragma once
// What the adapters of typed models (R-GCN, HAN: rgcn_adapter.cc, han_adapter.cc) share
// (private to train/): the module of type Model, built on context.device; the session's
// learned embedding tables (typed_inputs.h), whose rows forward looks up and whose pushed
// gradients are applied after every step's allreduce; the staging of the batch; and a
// checkpoint signature of the model's own followed by the optimizer kind.
//
// A derived adapter implements forward() with stage_inputs(), which stages the blocks and
// the typed inputs of a batch and keeps the inputs for after_backward().
// Model needs set_dropout_key(uint64_t) and config_signature().
#include <cstdint>
#include <memory>
#include <vector>

#include "partita/nn/block_tensors.h"
#include "partita/train/batch_staging.h"
#include "partita/train/model_adapter.h"
#include "typed_inputs.h"

namespace partita::train {

template <class Model>
class TypedAdapter : public ModelAdapter {
 public:
  TypedAdapter(const ModelContext& context, std::shared_ptr<Model> model)
      : session_(context.session),
        options_(context.options),
        model_(std::move(model)),
        embeddings_(has_embeddings(session_)),
        staging_(context.device) {}

  torch::nn::Module& module() override { return *model_; }
  void set_dropout_key(uint64_t key) override { model_->set_dropout_key(key); }
  BatchStaging& staging() override { return staging_; }

  std::vector<int64_t> config_signature() const override {
    std::vector<int64_t> signature = model_->config_signature();
    signature.push_back(static_cast<int64_t>(options_.optimizer.kind));
    return signature;
  }

  void after_backward() override {
    if (embeddings_) push_embedding_gradients(last_, session_);
    last_ = {};
  }

  // Every push of the step has arrived (the gradient allreduce is a barrier): apply them.
  void after_gradient_sum() override {
    if (embeddings_) apply_embedding_updates(session_);
  }

 protected:
  // Stages `batch`: its blocks into *blocks and its typed inputs (features, or embedding rows
  // that require grad in training), ready on the device. The inputs stay held until
  // after_backward().
  const TypedBatchInputs& stage_inputs(loader::Batch& batch,
                                       std::vector<nn::BlockTensors>* blocks) {
    *blocks = staging_.blocks(batch);
    last_ =
        typed_inputs(batch, session_, model_->is_training(), options_.normalize_features, staging_);
    staging_.ready();
    return last_;
  }

  runtime::Session& session_;
  const TrainOptions& options_;
  std::shared_ptr<Model> model_;

 private:
  bool embeddings_;
  BatchStaging staging_;
  TypedBatchInputs last_;  // inputs of the last forward, for after_backward
};

}  // namespace partita::train
