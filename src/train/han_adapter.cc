// The HAN adapter (nn/han.h) over typed partitions, fed metapath blocks
// (sample/metapath_sampler.h: every input node has the target type). The target type's
// inputs are its features or, for a featureless target type, rows of the session's learned
// embedding table, updated as R-GCN's (typed_inputs.h).
//
// Data-parallel training (more than one rank): the layers sum their semantic scores over
// the ranks (nn::HanModel::set_rank_sum) with the session's collectives, so beta is the one
// process's. The last layer's dst rows are the step's seeds, disjoint between ranks; an
// inner layer's (hop h >= 1) may repeat a node on several ranks, and its row is then the
// same on each (a node's sampled metapath neighbourhood is a function of the node and the
// step's key alone, metapath_sampler.h, so by induction over the hops is its whole input
// tree; beta is the same everywhere; dropout 0). One allgather per step of every rank's
// inner dst nodes gives each row its weight 1 / (ranks holding it at that hop), so the
// weighted sums over ranks count every node once, as one process does.
#include <absl/container/flat_hash_map.h>

#include <utility>

#include "partita/comm/collectives.h"
#include "partita/core/parameter_error.h"
#include "partita/nn/block_tensors.h"
#include "partita/nn/han.h"
#include "partita/train/metapaths.h"
#include "typed_adapter.h"

namespace partita::train {
namespace {

// The dst rows of hop h of `sampled` as (global id, time) keys (time 0 when not temporal),
// appended to *out after their count: hops 1..L-1 of an L-block batch, or (sampled null:
// a rank without seeds) L-1 empty hops.
void append_inner_dst_keys(const sample::SampledBatch* sampled, int64_t layers,
                           std::vector<int64_t>* out) {
  for (int64_t h = 1; h < layers; ++h) {
    if (sampled == nullptr) {
      out->push_back(0);
      continue;
    }
    const sample::Block& b = sampled->blocks[static_cast<size_t>(h)];
    out->push_back(b.num_dst);
    for (int64_t i = 0; i < b.num_dst; ++i) {
      out->push_back(b.src_nodes[static_cast<size_t>(i)]);
      out->push_back(b.src_times.empty() ? 0 : b.src_times[static_cast<size_t>(i)]);
    }
  }
}

// The collective of the row weights: every rank's inner dst keys, gathered (none with one
// layer: its rows are the seeds). With `sampled` (a rank with seeds), the weight of every dst
// row of every block (hop order; undefined for hop 0, whose rows are the seeds), float64 on
// the CPU; without, nothing.
std::vector<torch::Tensor> inner_row_weights(const sample::SampledBatch* sampled, int64_t layers,
                                             Collectives& collectives) {
  if (layers < 2) return {};
  std::vector<int64_t> mine;
  append_inner_dst_keys(sampled, layers, &mine);
  const std::vector<int64_t> all = collectives.allgather(mine);
  std::vector<torch::Tensor> weights(static_cast<size_t>(layers));
  if (sampled == nullptr) return weights;
  // How many ranks hold each key at each hop: every rank's part is L-1 counted runs.
  std::vector<absl::flat_hash_map<std::pair<int64_t, int64_t>, int>> holders(
      static_cast<size_t>(layers));
  size_t at = 0;
  for (int r = 0; r < collectives.size(); ++r) {
    for (int64_t h = 1; h < layers; ++h) {
      PARTITA_CHECK(at < all.size(), Error, "internal: HAN row keys end early (rank {})", r);
      const auto n = static_cast<size_t>(all[at++]);
      PARTITA_CHECK(at + 2 * n <= all.size(), Error, "internal: HAN row keys end early");
      for (size_t k = 0; k < n; ++k, at += 2)
        ++holders[static_cast<size_t>(h)][{all[at], all[at + 1]}];
    }
  }
  PARTITA_CHECK(at == all.size(), Error, "internal: {} HAN row keys left over", all.size() - at);
  for (int64_t h = 1; h < layers; ++h) {
    const sample::Block& b = sampled->blocks[static_cast<size_t>(h)];
    torch::Tensor w = torch::empty({b.num_dst}, torch::kFloat64);
    double* p = w.data_ptr<double>();
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t time = b.src_times.empty() ? 0 : b.src_times[static_cast<size_t>(i)];
      p[i] = 1.0 / holders[static_cast<size_t>(h)].at({b.src_nodes[static_cast<size_t>(i)], time});
    }
    weights[static_cast<size_t>(h)] = w;
  }
  return weights;
}

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
        target_(session_.graph().typed_meta().target_type) {
    Collectives& collectives = session_.collectives();
    if (collectives.size() > 1) {
      model_->set_rank_sum(
          [&collectives](std::vector<double>& values) { collectives.allreduce_sum(values); });
    }
  }

  torch::Tensor forward(loader::Batch& batch, double* flops) override {
    std::vector<torch::Tensor> weights;  // empty: weight 1 for every row
    if (synchronised()) {
      weights = inner_row_weights(&batch.sampled, model_->options().layers, session_.collectives());
    }
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
    return model_->forward(blocks, inputs.inputs[static_cast<size_t>(target_)], weights);
  }

  // The collectives a training forward and backward would make, in their order.
  void idle_training_step() override {
    if (!synchronised()) return;
    inner_row_weights(nullptr, model_->options().layers, session_.collectives());
    model_->idle_training_step();
  }

 private:
  // Whether training forwards sum over ranks: more than one rank, in training mode.
  bool synchronised() const { return session_.collectives().size() > 1 && model_->is_training(); }

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
