// The GraphSAGE / GCN / GAT adapter: see gnn_adapter.h.
#include "gnn_adapter.h"

#include "feature_tensors.h"
#include "partita/core/parameter_error.h"
#include "partita/nn/block_tensors.h"
#include "partita/train/device_feature_cache.h"

namespace partita::train {
namespace {

// The model input of a batch. Features stay in their stored type until here: float32 (no
// copy), or 16-bit rows widened to float32, except bfloat16 rows for a bf16 model, which
// take them as they are. Normalizing works in float32.
torch::Tensor features_tensor(loader::Batch& batch, const store::DistGraph& graph, bool normalize,
                              bool bf16_model, const DeviceFeatureCache* cache) {
  RECORD_USER_SCOPE("partita::features_tensor");  // a stage of train/step_profile.h
  // The fetched rows (every input's without a device cache), then the cached ones in place.
  const int64_t rows = loader::fetched_feature_rows(batch);
  torch::Tensor x =
      with_cached_rows(cache, batch,
                       torch::from_blob(batch.features.data(), {rows, graph.feat_dim()},
                                        torch_type_of(graph.feature_dtype())));
  const bool keep = !normalize && bf16_model && graph.feature_dtype() == DType::kBFloat16;
  if (!keep) x = x.to(torch::kFloat32);
  if (!normalize) return x;
  // An Error, not a usage error: one rank meets the row mid-training, alone. The parameter
  // is backquoted, so that a front end names it in its words (core/parameter_error.h).
  return row_normalized(x, [&batch](int64_t row, double sum) {
    return fmt::format(
        "`normalize_features`: the features of node {} (partition id) sum to {:g}; row "
        "normalization divides each row by its sum and needs non-negative features (as "
        "bag-of-words); leave it off for these features",
        batch.sampled.input_nodes[static_cast<size_t>(row)], sum);
  });
}

}  // namespace

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
      model_(std::move(model)),
      module_(std::move(module)) {}

torch::Tensor GnnAdapter::forward(loader::Batch& batch, double* flops) {
  const auto blocks = batch.degrees.empty()
                          ? nn::to_block_tensors(batch.sampled.blocks)
                          : nn::to_block_tensors(batch.sampled.blocks, batch.degrees);
  if (flops != nullptr) *flops += model_->training_matmul_flops(blocks);
  return model_->forward(
      blocks,
      features_tensor(batch, session_.graph(), options_.normalize_features, bf16_, device_cache_));
}

const store::ResidentRows* GnnAdapter::resident_rows() const {
  return device_cache_ != nullptr ? &device_cache_->resident() : nullptr;
}

std::vector<int64_t> GnnAdapter::config_signature() const {
  const nn::GnnOptions& m = model_->options();
  const int64_t heads = m.kind == nn::ConvKind::kGat ? m.heads : 1;  // only GAT reads it
  return {static_cast<int64_t>(m.kind),
          m.in_dim,
          m.hidden,
          m.out_dim,
          m.layers,
          heads,
          static_cast<int64_t>(m.norm),
          static_cast<int64_t>(options_.optimizer.kind)};
}

std::unique_ptr<ModelAdapter> make_gnn_adapter(const ModelContext& context) {
  const store::DistGraph& graph = context.session.graph();
  PARTITA_CHECK_PARAM(!graph.typed(), "model",
                      "{} is a typed (heterogeneous) partition: use `model` rgcn", graph.dir());
  auto model = std::make_shared<nn::GnnModel>(gnn_options(context));
  return std::make_unique<GnnAdapter>(context, model, model);
}

}  // namespace partita::train
