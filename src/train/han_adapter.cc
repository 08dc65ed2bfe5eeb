// The HAN adapter (nn/han.h) over typed partitions, fed metapath blocks
// (sample/metapath_sampler.h: every input node has the target type). The target type's
// inputs are its features or, for a featureless target type, rows of the session's learned
// embedding table, updated as R-GCN's (typed_inputs.h).
#include "partita/core/parameter_error.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/han.h"
#include "partita/train/metapaths.h"
#include "typed_adapter.h"

namespace partita::train {
namespace {

nn::HanOptions han_options(const ModelContext& context) {
  const TrainOptions& o = context.options;
  const partition::TypedMeta& typed = context.session.graph().typed_meta();
  nn::HanOptions h;
  h.num_metapaths = static_cast<int64_t>(resolve_metapaths(o, typed).size());
  const int64_t feat_dim = typed.node_types[static_cast<size_t>(typed.target_type)].feat_dim;
  // A featureless target type reads embedding rows as wide as the session's tables.
  h.in_dim = feat_dim > 0 ? feat_dim : o.model.hidden;
  h.head_dim = o.model.hidden;
  h.heads = o.model.heads;
  h.out_dim = o.model.out_dim;
  h.layers = o.model.layers;
  h.dropout = o.model.dropout;
  h.attention_dropout =
      o.model.attention_dropout >= 0 ? o.model.attention_dropout : o.model.dropout;
  h.precision = context.precision;
  return h;
}

class HanAdapter final : public TypedAdapter<nn::HanModel> {
 public:
  explicit HanAdapter(const ModelContext& context)
      : TypedAdapter(context, std::make_shared<nn::HanModel>(han_options(context))),
        target_(session_.graph().typed_meta().target_type) {}

  torch::Tensor forward(loader::Batch& batch, double* flops) override {
    std::vector<nn::BlockTensors> blocks;
    const TypedBatchInputs& inputs = stage_inputs(batch, &blocks);
    for (size_t t = 0; t < inputs.inputs.size(); ++t) {
      const torch::Tensor& positions = inputs.inputs[t].positions;
      PARTITA_CHECK(
          static_cast<int>(t) == target_ || !positions.defined() || positions.numel() == 0, Error,
          "internal: a metapath batch has {} input nodes of type {}, not the target type",
          positions.numel(), t);
    }
    if (flops != nullptr) *flops += model_->training_matmul_flops(blocks);
    return model_->forward(blocks, inputs.inputs[static_cast<size_t>(target_)]);
  }

 private:
  int target_;
};

}  // namespace

std::unique_ptr<ModelAdapter> make_han_adapter(const ModelContext& context) {
  const store::DistGraph& graph = context.session.graph();
  PARTITA_CHECK_PARAM(graph.typed(), "model",
                      "han needs node and edge types, and {} is not a typed (heterogeneous) "
                      "partition (use `model` sage, gcn or gat)",
                      graph.dir());
  PARTITA_CHECK_PARAM(
      context.options.eval.mode != EvalMode::kFull, "eval",
      "full-graph inference (full) supports sage, gcn, gat, gatv2 and gine in worker "
      "mode (not `model` han, not `servers`); use `eval` sampled");
  return std::make_unique<HanAdapter>(context);
}

}  // namespace partita::train
