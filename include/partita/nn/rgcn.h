#pragma once
// R-GCN (Schlichtkrull et al.) on typed blocks (BlockTensors::typed()): a relational graph
// convolution, and a model stacking 2-3 of them over typed inputs (per node type either
// features, projected to the hidden width, or learned embedding rows owned by the caller).
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "partita/nn/block_tensors.h"
#include "partita/nn/conv.h"
#include "partita/nn/precision.h"

namespace partita::nn {

// One relational convolution over R relations:
//   out_i = W_self x_i + sum_{r < R} mean_{j in N_r(i)} (x_j W_r) + b
// N_r(i) = i's in-edges of relation r in the block; a relation without an edge into i adds 0.
// With num_bases B > 0, W_r = sum_b comp[r, b] * basis[b] (basis decomposition); otherwise
// every W_r is its own [in, out] parameter. The block may have fewer relations than R
// (relations past block.num_relations have no edges there), never more.
//
// The mean is linear, so the layer aggregates first: relation_mean gives one row per (dst,
// relation) pair that has edges, grouped by relation, in one fused pass; relation r's rows
// are multiplied by W_r and added to their dst. The products cover exactly the pairs with
// edges (a dst type that receives 2 of 8 relations costs 2 products per row, not 8), over
// dst rows only.
// x_src may be float32 or bfloat16 (parameters stay float32 and are cast, as in conv.h).
class RelGraphConv : public BlockConv {
 public:
  // Throws partita::Error on a non-positive dimension or relation count, or num_bases < 0.
  RelGraphConv(int64_t in_dim, int64_t out_dim, int64_t num_relations, int64_t num_bases = 0,
               bool self_loop = true);
  // A block without edges may be untyped (its dst rows get the self term and the bias).
  // Throws partita::Error on an untyped block with edges, one with more relations than the
  // layer, or a wrong x_src shape.
  torch::Tensor forward(const BlockTensors& block, const torch::Tensor& x_src) override;
  int64_t out_dim() const override { return out_dim_; }
  double matmul_flops(const BlockTensors& block) const override;

  // W_r for every relation: [R, in, out] (from the bases when num_bases > 0).
  torch::Tensor relation_weights() const;

  torch::Tensor weight;       // [R, in, out]; num_bases == 0 only
  torch::Tensor basis;        // [B, in, out]; num_bases > 0 only
  torch::Tensor comp;         // [R, B]; num_bases > 0 only
  torch::Tensor self_weight;  // [in, out]; self_loop only
  torch::Tensor bias;         // [out]

 private:
  int64_t in_dim_;
  int64_t out_dim_;
  int64_t num_relations_;
  int64_t num_bases_;
};

struct RgcnOptions {
  int64_t num_relations = 0;
  // Per node type (in the schema's order) the width of its input features; 0: the type has
  // no features, and its input rows are learned embeddings of width `hidden` that the caller
  // owns and passes in (RgcnInput::x).
  std::vector<int64_t> type_dims;
  int64_t hidden = 64;
  int64_t out_dim = 0;    // number of classes
  int64_t layers = 2;     // >= 1
  int64_t num_bases = 0;  // 0: a full weight per relation; B > 0: B shared bases
  double dropout = 0.0;   // on every layer's input (after the projection), training only
  bool self_loop = true;  // the W_self x_i term
  Precision precision = Precision::kFp32;  // as GnnOptions::precision
};

// The input rows of one node type: rows `positions` (int64 [n_t]) among the input nodes
// (blocks.back()'s src nodes) get x ([n_t, D_t] float32 features, or [n_t, hidden]
// embedding rows: pass a tensor that requires grad and read its grad() after backward to
// update the embedding's rows). A type with no input nodes passes empty tensors.
struct RgcnInput {
  torch::Tensor positions;
  torch::Tensor x;
};

class RgcnModel : public torch::nn::Module {
 public:
  // Throws partita::Error on an empty type list, a negative type dim, a non-positive
  // dimension or relation count, layers < 1, num_bases < 0 or dropout outside [0, 1).
  explicit RgcnModel(const RgcnOptions& options);

  // blocks in hop order (blocks[0].dst = seeds), all typed; inputs: one per node type, whose
  // positions together cover every input node exactly once. Each featured type goes through
  // its projection Linear(D_t, hidden) (module "proj<t>"); featureless types feed their rows
  // as they are. Layer 0 runs on blocks.back(), layer L-1 on blocks[0]; each layer's input
  // goes through dropout (training only), hidden layers are followed by ReLU. With kBf16
  // every layer but the output layer runs in bf16 (as GnnModel).
  // Returns float32 logits [blocks[0].num_dst, out_dim].
  // Throws partita::Error if blocks.size() != layers, inputs.size() != the type count, or
  // an input's shape or positions are wrong.
  torch::Tensor forward(const std::vector<BlockTensors>& blocks,
                        const std::vector<RgcnInput>& inputs);

  // As GnnModel::set_dropout_key.
  void set_dropout_key(uint64_t key) { dropout_key_ = key; }

  // Matrix-product flops of one training step (forward and backward): the projections
  // (forward and weight gradient), and every layer's forward, weight and input gradients.
  double training_matmul_flops(const std::vector<BlockTensors>& blocks,
                               const std::vector<RgcnInput>& inputs) const;

  // The model's shape, for checkpoints: loading parameters saved under another signature
  // must be refused. Starts with kSignatureTag, which no GnnModel signature starts with.
  std::vector<int64_t> config_signature() const;
  static constexpr int64_t kSignatureTag = 0x5247434e;  // "RGCN"

  const RgcnOptions& options() const { return options_; }

 private:
  RgcnOptions options_;
  std::vector<torch::nn::Linear> projections_;  // per type; empty handle for featureless
  std::vector<std::shared_ptr<RelGraphConv>> convs_;
  uint64_t dropout_key_ = 0;
};

}  // namespace partita::nn
