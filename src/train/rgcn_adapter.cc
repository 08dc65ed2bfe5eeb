// The R-GCN adapter (nn/rgcn.h) over typed partitions, with the session's learned embedding
// tables for featureless node types (typed_inputs.h): forward looks the rows up,
// after_backward pushes their gradients, after_gradient_sum applies every push.
#include "partita/core/parameter_error.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/rgcn.h"
#include "typed_adapter.h"

namespace partita::train {
namespace {

nn::RgcnOptions rgcn_options(const ModelContext& context) {
  const TrainOptions& o = context.options;
  const partition::TypedMeta& typed = context.session.graph().typed_meta();
  nn::RgcnOptions r;
  r.num_relations = typed.num_relations();
  for (const partition::TypedNodeType& t : typed.node_types) r.type_dims.push_back(t.feat_dim);
  r.hidden = o.model.hidden;
  r.out_dim = o.model.out_dim;
  r.layers = o.model.layers;
  r.num_bases = o.model.num_bases;
  r.dropout = o.model.dropout;
  r.precision = context.precision;
  return r;
}

class RgcnAdapter final : public TypedAdapter<nn::RgcnModel> {
 public:
  explicit RgcnAdapter(const ModelContext& context)
      : TypedAdapter(context, std::make_shared<nn::RgcnModel>(rgcn_options(context))) {}

  torch::Tensor forward(loader::Batch& batch, double* flops) override {
    std::vector<nn::BlockTensors> blocks;
    const TypedBatchInputs& inputs = stage_inputs(batch, &blocks);
    if (flops != nullptr) *flops += model_->training_matmul_flops(blocks, inputs.inputs);
    return model_->forward(blocks, inputs.inputs);
  }
};

}  // namespace

std::unique_ptr<ModelAdapter> make_rgcn_adapter(const ModelContext& context) {
  const store::DistGraph& graph = context.session.graph();
  const TrainOptions& o = context.options;
  PARTITA_CHECK_PARAM(graph.typed(), "model",
                      "rgcn needs node and edge types, and {} is not a typed (heterogeneous) "
                      "partition (use `model` sage, gcn or gat)",
                      graph.dir());
  // num_bases >= 0 is check_options' (train_options.h), for every model.
  const int relations = graph.typed_meta().num_relations();
  PARTITA_CHECK_PARAM(o.model.num_bases <= relations, "num_bases",
                      "{} bases for {} relations; use at most {} (or 0: one weight per relation)",
                      o.model.num_bases, relations, relations);
  PARTITA_CHECK_PARAM(
      o.eval.mode != EvalMode::kFull, "eval",
      "full-graph inference (full) supports sage, gcn, gat, gatv2 and gine in worker "
      "mode (not `model` rgcn, not `servers`); use `eval` sampled");
  return std::make_unique<RgcnAdapter>(context);
}

}  // namespace partita::train
