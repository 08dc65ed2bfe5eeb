#pragma once
// HAN (Wang et al., "Heterogeneous Graph Attention Network", 2019) on metapath blocks: typed
// blocks (BlockTensors::typed()) whose relation ids are metapath indices 0..M-1 and whose
// src and dst nodes are all of one node type (the labelled one), dst nodes first among the
// src nodes (sample/metapath_sampler.h makes them). The model sees that type's rows only:
// its features, or learned embedding rows owned by the caller (as R-GCN's, nn/rgcn.h).
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "partita/nn/block_tensors.h"
#include "partita/nn/precision.h"
#include "partita/nn/rgcn.h"

namespace partita::nn {

// Sums `values` over the data-parallel ranks of a training step, in place: afterwards every
// rank holds the elementwise sum of every rank's values (the same bits on every rank). A
// collective: every rank calls it the same number of times, in the same order, with the same
// size. nn/ does not know how (train/han_adapter.cc: the session's collectives).
using RankSum = std::function<void(std::vector<double>& values)>;

// x summed over the ranks by `sum` (x's values copied to the host as float64 and back, to
// x's dtype and device), differentiably: the backward sums the incoming gradient over the
// ranks by `sum` the same way (one call, x.numel() values). So each rank's gradient w.r.t.
// its x is the gradient of the sum of every rank's loss w.r.t. the summed value.
torch::Tensor sum_over_ranks(const torch::Tensor& x, const RankSum& sum);

// One HAN layer over M metapaths, K heads of width D (out_dim = K * D):
//   h = x W                                  (one projection [in, K*D] shared by the
//                                             metapaths, as PyG's HANConv; no bias)
// node-level attention, per metapath m and head k, over N_m(i) ∪ {i} (i's in-edges of
// metapath m in the block, plus a self loop, so a dst without edges of m keeps h_i):
//   e_ij = LeakyReLU_0.2(a_dst[m,k] . h_i,k + a_src[m,k] . h_j,k)
//   alpha_ij = softmax_j e_ij,  z_m,i,k = ELU(sum_j alpha_ij h_j,k + b_m,k)
// semantic attention across metapaths (over the block's dst rows):
//   w_m = mean_i q . tanh(z_m,i S + s),  beta = softmax_m w,  out_i = sum_m beta_m z_m,i
// Data-parallel training (set_rank_sum, training mode): the mean is over the dst rows of
// every rank's block, the way SyncBatchNorm takes BatchNorm's statistics: with c_i the
// weight of row i (dst_weight; 1 when not given),
//   w_m = (sum over ranks of sum_i c_i q . tanh(z_m,i S + s)) / (sum over ranks of sum_i c_i)
// by one rank sum of M + 1 values in forward and one of M + 1 in backward (sum_over_ranks).
// With rows that several ranks hold (the same node, hence the same row, on k ranks), c_i =
// 1 / k makes the global sums those of one process holding every row once. Eval mode (and
// no rank sum set) keeps the local mean, with no collective.
// In training mode alpha goes through dropout (attention_dropout) with the key of the
// metapath (set_dropout_keys). x_src may be float32, bfloat16 (parameters cast, as conv.h;
// the semantic scores and beta in float32) or float64 (for gradient checks, with the
// parameters converted to float64 by the caller).
class HanConv : public torch::nn::Module {
 public:
  // Throws partita::Error on a non-positive dimension, head or metapath count, or an
  // attention dropout outside [0, 1).
  HanConv(int64_t in_dim, int64_t head_dim, int64_t heads, int64_t num_metapaths,
          int64_t semantic_dim, double attention_dropout);

  // block: typed with at most M metapaths (or without edges); x_src [num_src, in_dim].
  // Returns [num_dst, K * D] in x_src's dtype. With `beta` given, also the semantic
  // weights [M] (float32, or float64 for float64 x). Throws partita::Error on a block with
  // more metapaths than the layer, an untyped block with edges, or a wrong x_src shape.
  // dst_weight: c_i above, [num_dst] of any floating type, or undefined (every c_i = 1);
  // used only when the scores are summed over ranks.
  torch::Tensor forward(const BlockTensors& block, const torch::Tensor& x_src,
                        torch::Tensor* beta = nullptr, const torch::Tensor& dst_weight = {});
  int64_t out_dim() const { return heads_ * head_dim_; }
  int64_t num_metapaths() const { return num_metapaths_; }
  // How training forwards sum the semantic scores over ranks (see above); null (the
  // default): the local mean, also in training.
  void set_rank_sum(RankSum sum) { rank_sum_ = std::move(sum); }
  // Whether the next forward sums its scores over ranks: a rank sum is set and the layer is
  // in training mode.
  bool syncs_scores() const { return rank_sum_ != nullptr && is_training(); }
  // Forward matrix-product flops on `block`: the projection and the semantic scores.
  double matmul_flops(const BlockTensors& block) const;
  // The attention dropout key of the next forward: metapath m uses stream_key(key, m).
  void set_dropout_key(uint64_t key) { dropout_key_ = key; }

  torch::nn::Linear lin{nullptr};       // in -> K * D, no bias
  torch::Tensor att_src;                // [M, K, D]
  torch::Tensor att_dst;                // [M, K, D]
  torch::Tensor bias;                   // [M, K * D]
  torch::nn::Linear semantic{nullptr};  // K * D -> semantic_dim, with bias (S, s)
  torch::Tensor semantic_q;             // [semantic_dim]

 private:
  int64_t in_dim_;
  int64_t head_dim_;
  int64_t heads_;
  int64_t num_metapaths_;
  double attention_dropout_;
  uint64_t dropout_key_ = 0;
  RankSum rank_sum_;
};

// The edges of metapath m of a typed block as an untyped block on the same nodes (no self
// loops), for m in [0, num_metapaths): result[m]. Every field as to_block_tensors would
// build it, on the block's device.
std::vector<BlockTensors> split_by_relation(const BlockTensors& block, int64_t num_metapaths);

struct HanOptions {
  int64_t num_metapaths = 0;
  // Width of the target type's input rows: its features' width, or (a featureless type)
  // the width of the learned embedding rows the caller passes in.
  int64_t in_dim = 0;
  int64_t head_dim = 8;                    // D: width of one head
  int64_t heads = 8;                       // K; every layer outputs K * D
  int64_t semantic_dim = 128;              // width of the semantic attention's hidden layer
  int64_t out_dim = 0;                     // number of classes
  int64_t layers = 1;                      // HAN layers, one per block (hop), >= 1
  double dropout = 0.0;                    // on every HAN layer's input, training only
  double attention_dropout = 0.0;          // on the node-level attention, training only
  Precision precision = Precision::kFp32;  // as GnnOptions::precision
};

// HAN layers then a classifier Linear(K * D, out_dim). Layer 0's shared projection is the
// input projection of the target type (its features or embedding rows).
class HanModel : public torch::nn::Module {
 public:
  // Throws partita::Error on a non-positive dimension or count, layers < 1, or a dropout
  // outside [0, 1).
  explicit HanModel(const HanOptions& options);

  // blocks in hop order (blocks[0].dst = seeds), metapath blocks as above; input: rows
  // `positions` (a permutation of the input nodes, blocks.back()'s src nodes) get x
  // ([n, in_dim] float32; embedding rows may require grad). Layer 0 runs on blocks.back(),
  // layer L-1 on blocks[0]; every layer's input goes through dropout (training only). With
  // kBf16 the HAN layers run in bf16, the classifier in fp32.
  // Returns float32 logits [blocks[0].num_dst, out_dim].
  // dst_weights: empty, or one per block (hop order; undefined: weight 1 per row), the
  // HanConv dst_weight of the layer on that block.
  // Throws partita::Error if blocks.size() != layers, dst_weights has another non-zero size,
  // or the input's shape or positions are wrong.
  torch::Tensor forward(const std::vector<BlockTensors>& blocks, const RgcnInput& input,
                        const std::vector<torch::Tensor>& dst_weights = {});

  // Data-parallel training: every layer sums its semantic scores over ranks with `sum`
  // (HanConv::set_rank_sum; null: none). Then each training forward and its backward make
  // 2 * layers rank sums, layer 0 first in forward and last in backward, and every rank must
  // take part in every one: a rank without rows in a step calls idle_training_step instead.
  // (A training-mode forward without grad, under torch::NoGradGuard, makes only the forward
  // sums: don't.)
  void set_rank_sum(RankSum sum);
  // The rank sums of one training forward and backward, with zero contributions, in the
  // same order and sizes; nothing when no rank sum is set or in eval mode.
  void idle_training_step();

  // As GnnModel::set_dropout_key: one key per step gives bit-identical reruns.
  void set_dropout_key(uint64_t key) { dropout_key_ = key; }

  // Matrix-product flops of one training step (forward and backward).
  double training_matmul_flops(const std::vector<BlockTensors>& blocks) const;

  // The model's shape, for checkpoints. Starts with kSignatureTag, which no other model's
  // signature starts with.
  std::vector<int64_t> config_signature() const;
  static constexpr int64_t kSignatureTag = 0x48414e;  // "HAN"

  const HanOptions& options() const { return options_; }
  HanConv& layer(int64_t l) { return *convs_[static_cast<size_t>(l)]; }
  torch::nn::Linear& classifier() { return classifier_; }

 private:
  HanOptions options_;
  std::vector<std::shared_ptr<HanConv>> convs_;
  torch::nn::Linear classifier_{nullptr};
  uint64_t dropout_key_ = 0;
  RankSum rank_sum_;
};

}  // namespace partita::nn
