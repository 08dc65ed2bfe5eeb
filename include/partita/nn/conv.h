#pragma once
// Graph convolutions on one sampled block. Every layer's contract:
//   forward(block, x_src) -> x_dst
// with x_src [block.num_src, in_dim] (its first num_dst rows are the dst nodes' own
// features) and x_dst [block.num_dst, out_dim]. Edges are src -> dst (in-neighbors of dst).
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include <cstdint>

#include "partita/nn/block_tensors.h"

namespace partita::nn {

// Common base so a model can hold layers of any kind.
class BlockConv : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(const BlockTensors& block, const torch::Tensor& x_src) = 0;
  virtual int64_t out_dim() const = 0;
};

// GraphSAGE, mean aggregator:
//   out_i = W_neigh * mean_{j in N(i)} x_j + W_root * x_i + b
// mean is 0 for a dst with no in-edges. W_neigh carries the bias, W_root has none.
class SAGEConv : public BlockConv {
 public:
  SAGEConv(int64_t in_dim, int64_t out_dim);
  torch::Tensor forward(const BlockTensors& block, const torch::Tensor& x_src) override;
  int64_t out_dim() const override { return out_dim_; }

  torch::nn::Linear lin_neigh{nullptr};
  torch::nn::Linear lin_root{nullptr};

 private:
  int64_t out_dim_;
};

// GCN (Kipf & Welling) with a self loop. Two normalizations:
//
// With block.graph_deg defined (the loader fetched each node's in-degree d in the whole
// graph), the paper's normalization, with sampled neighborhoods rescaled so that the sum
// estimates the full one without bias (k_i = in-degree of dst i in the block):
//   out_i = (W x_i) / (d_i + 1)
//         + (d_i / k_i) * sum_{j in sampled N(i)} (W x_j) / sqrt((d_i + 1) * (d_j + 1)) + b
// With full neighborhoods k_i = d_i and this is exactly the paper's layer.
//
// Without graph degrees, from the block's own degrees:
//   out_i = sum_{j in N(i) ∪ {i}} (W x_j) / sqrt((deg_dst_i + 1) * (deg_src_j + 1)) + b
// deg_dst_i = in-degree of dst i in the block, deg_src_j = out-degree of src j in the
// block (edges with j as source); the self-loop term uses src row i (= dst i) and its
// deg_src_i. Edges listed twice count twice.
class GCNConv : public BlockConv {
 public:
  GCNConv(int64_t in_dim, int64_t out_dim);
  torch::Tensor forward(const BlockTensors& block, const torch::Tensor& x_src) override;
  int64_t out_dim() const override { return out_dim_; }

  torch::nn::Linear lin{nullptr};  // no bias; `bias` is added after aggregation
  torch::Tensor bias;

 private:
  int64_t out_dim_;
};

// GAT (Velickovic et al.) with K heads and a self loop per dst. Per head k:
//   h_j = W_k x_j, e_ij = LeakyReLU_0.2(a_dst_k . h_i + a_src_k . h_j) for j in N(i) ∪ {i}
//   alpha_ij = softmax over j of e_ij (stable: per-dst max subtracted)
//   out_i,k = sum_j alpha_ij h_j
// concat: out = [out_1 || ... || out_K] + b, out_dim = K * head_dim; else the heads'
// mean + b, out_dim = head_dim. No attention dropout.
class GATConv : public BlockConv {
 public:
  GATConv(int64_t in_dim, int64_t head_dim, int64_t heads, bool concat = true);
  torch::Tensor forward(const BlockTensors& block, const torch::Tensor& x_src) override;
  int64_t out_dim() const override { return concat_ ? heads_ * head_dim_ : head_dim_; }

  // As forward, also returning alpha [E + num_dst, K]: rows [0, E) follow the block's
  // edges, rows [E, E + num_dst) are the self loops of dst 0..num_dst-1.
  torch::Tensor forward_with_attention(const BlockTensors& block, const torch::Tensor& x_src,
                                       torch::Tensor* alpha);

  torch::nn::Linear lin{nullptr};  // in_dim -> heads * head_dim, no bias
  torch::Tensor att_src;           // [heads, head_dim]
  torch::Tensor att_dst;           // [heads, head_dim]
  torch::Tensor bias;              // [out_dim]

 private:
  int64_t head_dim_;
  int64_t heads_;
  bool concat_;
};

}  // namespace partita::nn
