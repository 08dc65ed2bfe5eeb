#pragma once
// The adapter of a homogeneous node model (GraphSAGE, GCN, GAT; private to train/, see
// partita/train/model_adapter.h). The link adapter extends it with a decoder.
#include <memory>

#include "partita/train/batch_staging.h"
#include "partita/train/model_adapter.h"

namespace partita::train {

class GnnAdapter : public ModelAdapter {
 public:
  // Refuses a typed graph (R-GCN's) and full-graph evaluation outside worker mode.
  GnnAdapter(const ModelContext& context, std::shared_ptr<nn::GnnModel> model,
             std::shared_ptr<torch::nn::Module> module);

  torch::nn::Module& module() override { return *module_; }
  torch::Tensor forward(loader::Batch& batch, double* flops) override;
  void set_dropout_key(uint64_t key) override { model_->set_dropout_key(key); }
  std::vector<int64_t> config_signature() const override;
  bool needs_degrees() const override { return model_->options().kind == nn::ConvKind::kGcn; }
  nn::GnnModel* gnn() override { return model_.get(); }
  BatchStaging& staging() override { return staging_; }
  void set_device_cache(const DeviceFeatureCache* cache) override { device_cache_ = cache; }
  const store::ResidentRows* resident_rows() const override;

 protected:
  runtime::Session& session_;
  const TrainOptions& options_;
  bool bf16_;
  BatchStaging staging_;
  std::shared_ptr<nn::GnnModel> model_;
  std::shared_ptr<torch::nn::Module> module_;  // model_, or the link model around it
  const DeviceFeatureCache* device_cache_ = nullptr;
};

// The model options of `context`: options.model at the context's precision.
nn::GnnOptions gnn_options(const ModelContext& context);

}  // namespace partita::train
