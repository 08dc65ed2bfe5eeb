// The GraphSAGE / GCN / GAT adapter: see gnn_adapter.h.
#include "gnn_adapter.h"

#include "partita/core/parameter_error.h"
#include "partita/nn/block_tensors.h"
#include "partita/train/checkpoint.h"
#include "partita/train/device_feature_cache.h"

namespace partita::train {

nn::GnnOptions gnn_options(const ModelContext& context) {
  nn::GnnOptions m = gnn_options(context.options.model);
  m.precision = context.precision;
  return m;
}

GnnAdapter::GnnAdapter(const ModelContext& context, std::shared_ptr<nn::GnnModel> model,
                       std::shared_ptr<torch::nn::Module> module)
    : session_(context.session),
      options_(context.options),
      bf16_(context.precision == nn::Precision::kBf16),
      staging_(context.device),
      model_(std::move(model)),
      module_(std::move(module)) {}

torch::Tensor GnnAdapter::forward(loader::Batch& batch, double* flops) {
  std::vector<nn::BlockTensors> blocks = staging_.blocks(batch);
  if (options_.loader.edge_features) staging_.edge_features(batch, session_.graph(), blocks);
  const torch::Tensor x =
      staging_.features(batch, session_.graph(), options_.normalize_features, bf16_, device_cache_);
  staging_.ready();
  if (flops != nullptr) *flops += model_->training_matmul_flops(blocks);
  return model_->forward(blocks, x);
}

const store::ResidentRows* GnnAdapter::resident_rows() const {
  return device_cache_ != nullptr ? &device_cache_->resident() : nullptr;
}

std::vector<int64_t> GnnAdapter::config_signature() const {
  const nn::GnnOptions& m = model_->options();
  // Only GAT and GATv2 read it.
  const bool attention = m.kind == nn::ConvKind::kGat || m.kind == nn::ConvKind::kGatv2;
  const int64_t heads = attention ? m.heads : 1;
  std::vector<int64_t> signature{static_cast<int64_t>(m.kind),
                                 m.in_dim,
                                 m.hidden,
                                 m.out_dim,
                                 m.layers,
                                 heads,
                                 static_cast<int64_t>(m.norm),
                                 static_cast<int64_t>(options_.optimizer.kind)};
  if (m.edge_dim > 0) signature.insert(signature.end(), {kEdgeFeaturesSignatureTag, m.edge_dim});
  return signature;
}

std::unique_ptr<ModelAdapter> make_gnn_adapter(const ModelContext& context) {
  const store::DistGraph& graph = context.session.graph();
  PARTITA_CHECK_PARAM(!graph.typed(), "model",
                      "{} is a typed (heterogeneous) partition: use `model` rgcn", graph.dir());
  auto model = std::make_shared<nn::GnnModel>(gnn_options(context));
  return std::make_unique<GnnAdapter>(context, model, model);
}

}  // namespace partita::train
