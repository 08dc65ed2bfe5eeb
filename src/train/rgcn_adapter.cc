// The R-GCN adapter (nn/rgcn.h) over typed partitions, with the session's learned embedding
// tables for featureless node types (typed_inputs.h): forward looks the rows up,
// after_backward pushes their gradients, after_gradient_sum applies every push.
#include "partita/core/parameter_error.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/rgcn.h"
#include "partita/train/batch_staging.h"
#include "partita/train/model_adapter.h"
#include "typed_inputs.h"

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

class RgcnAdapter final : public ModelAdapter {
 public:
  explicit RgcnAdapter(const ModelContext& context)
      : session_(context.session),
        options_(context.options),
        model_(std::make_shared<nn::RgcnModel>(rgcn_options(context))),
        embeddings_(has_embeddings(session_)),
        staging_(context.device) {}

  torch::nn::Module& module() override { return *model_; }

  torch::Tensor forward(loader::Batch& batch, double* flops) override {
    const std::vector<nn::BlockTensors> blocks = staging_.blocks(batch);
    TypedBatchInputs inputs =
        typed_inputs(batch, session_, model_->is_training(), options_.normalize_features, staging_);
    staging_.ready();
    if (flops != nullptr) *flops += model_->training_matmul_flops(blocks, inputs.inputs);
    torch::Tensor logits = model_->forward(blocks, inputs.inputs);
    last_ = std::move(inputs);
    return logits;
  }

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

 private:
  runtime::Session& session_;
  const TrainOptions& options_;
  std::shared_ptr<nn::RgcnModel> model_;
  bool embeddings_;
  BatchStaging staging_;
  TypedBatchInputs last_;  // inputs of the last forward, for after_backward
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
  PARTITA_CHECK_PARAM(o.eval.mode != EvalMode::kFull, "eval",
                      "full-graph inference (full) supports GraphSAGE, GCN and GAT in worker "
                      "mode (not `model` rgcn, not `servers`); use `eval` sampled");
  return std::make_unique<RgcnAdapter>(context);
}

}  // namespace partita::train
