#pragma once
// Graph convolutions on one sampled block. Every layer's contract:
//   forward(block, x_src) -> x_dst
// with x_src [block.num_src, in_dim] (its first num_dst rows are the dst nodes' own
// features) and x_dst [block.num_dst, out_dim]. Edges are src -> dst (in-neighbors of dst).
//
// Message passing runs on the fused kernels of message_passing.h (no per-edge feature
// rows). x_src may be float32 or bfloat16: the parameters stay float32 (master weights) and
// are cast to x_src's type for the matrix products, so bf16 inputs give bf16 outputs with
// fp32 accumulation inside the kernels.
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
  // Floating-point operations of forward's matrix products on `block` (multiply-adds
  // count 2), for throughput figures.
  virtual double matmul_flops(const BlockTensors& block) const = 0;
};

// lin(x) with lin's float32 parameters cast to x's type (bf16 products on bf16 inputs).
torch::Tensor linear_as_input(torch::nn::Linear& lin, const torch::Tensor& x);

// GraphSAGE, mean aggregator:
//   out_i = W_neigh * mean_{j in N(i)} x_j + W_root * x_i + b
// mean is 0 for a dst with no in-edges. W_neigh carries the bias, W_root has none.
// Aggregates first, then transforms num_dst rows only.
class SAGEConv : public BlockConv {
 public:
  SAGEConv(int64_t in_dim, int64_t out_dim);
  torch::Tensor forward(const BlockTensors& block, const torch::Tensor& x_src) override;
  int64_t out_dim() const override { return out_dim_; }
  double matmul_flops(const BlockTensors& block) const override;

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
//
// W is applied before or after the (linear) aggregation, whichever costs fewer flops.
class GCNConv : public BlockConv {
 public:
  GCNConv(int64_t in_dim, int64_t out_dim);
  torch::Tensor forward(const BlockTensors& block, const torch::Tensor& x_src) override;
  int64_t out_dim() const override { return out_dim_; }
  double matmul_flops(const BlockTensors& block) const override;
  // Whether forward applies W before aggregating (fewer flops when out_dim is small).
  bool transforms_first(const BlockTensors& block) const;

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
// mean + b, out_dim = head_dim. In training mode, alpha goes through dropout with
// probability attention_dropout (the paper's dropout on the normalized coefficients), with
// the key set by set_dropout_key.
//
// With edge_dim > 0 (PyG's GATConv(edge_dim=...)), each edge's features e_ij
// (block.edge_feat [E, edge_dim], required) add a term to the logit:
//   e_ij = LeakyReLU_0.2(a_dst_k . h_i + a_src_k . h_j + a_edge_k . (W_e e_ij)_k)
// with W_e: edge_dim -> K * head_dim without bias; a self loop's features are the mean of
// its dst's edge features (with_self_loops). edge_dim 0 builds exactly the layer above
// (the same parameters, drawn in the same order).
class GATConv : public BlockConv {
 public:
  GATConv(int64_t in_dim, int64_t head_dim, int64_t heads, bool concat = true,
          double attention_dropout = 0.0, int64_t edge_dim = 0);
  torch::Tensor forward(const BlockTensors& block, const torch::Tensor& x_src) override;
  int64_t out_dim() const override { return concat_ ? heads_ * head_dim_ : head_dim_; }
  double matmul_flops(const BlockTensors& block) const override;

  // As forward, also returning alpha [E + num_dst, K] (before dropout): rows [0, E) follow
  // the block's edges, rows [E, E + num_dst) are the self loops of dst 0..num_dst-1.
  torch::Tensor forward_with_attention(const BlockTensors& block, const torch::Tensor& x_src,
                                       torch::Tensor* alpha);

  // Key of the attention-dropout mask of the next forward (nn/dropout.h).
  void set_dropout_key(uint64_t key) { dropout_key_ = key; }

  torch::nn::Linear lin{nullptr};  // in_dim -> heads * head_dim, no bias
  torch::Tensor att_src;           // [heads, head_dim]
  torch::Tensor att_dst;           // [heads, head_dim]
  torch::Tensor bias;              // [out_dim]
  // edge_dim > 0 only (else null / undefined):
  torch::nn::Linear lin_edge{nullptr};  // edge_dim -> heads * head_dim, no bias
  torch::Tensor att_edge;               // [heads, head_dim]

 private:
  int64_t head_dim_;
  int64_t heads_;
  bool concat_;
  double attention_dropout_;
  int64_t edge_dim_;
  uint64_t dropout_key_ = 0;
};

// GATv2 (Brody et al. 2022, "How attentive are graph attention networks?"; PyG's
// GATv2Conv with share_weights=False) with K heads and a self loop per dst. Per head k:
//   e_ij = a_k . LeakyReLU_0.2(W_src,k x_j + W_dst,k x_i (+ W_e,k e_ij))   for j in N(i) ∪ {i}
//   alpha_ij = softmax over j of e_ij, out_i,k = sum_j alpha_ij W_src,k x_j
// The nonlinearity sits inside the dot product, so the ranking of the neighbours may depend
// on the dst (GAT's cannot). Heads concatenated or averaged, bias, attention dropout and
// the self loops' edge features (the mean of their row's) as GATConv. W_src, W_dst, W_e:
// no bias. edge_dim 0: no W_e term (block.edge_feat ignored); edge_dim > 0: block.edge_feat
// [E, edge_dim] required.
//
// The logits are computed by torch ops on every device (one [E + num_dst, K * head_dim]
// pre-activation tensor per forward); the softmax and the aggregation run on the fused
// kernels of message_passing.h on the CPU, as GAT's.
class GATv2Conv : public BlockConv {
 public:
  GATv2Conv(int64_t in_dim, int64_t head_dim, int64_t heads, bool concat = true,
            double attention_dropout = 0.0, int64_t edge_dim = 0);
  torch::Tensor forward(const BlockTensors& block, const torch::Tensor& x_src) override;
  int64_t out_dim() const override { return concat_ ? heads_ * head_dim_ : head_dim_; }
  double matmul_flops(const BlockTensors& block) const override;

  // Key of the attention-dropout mask of the next forward (nn/dropout.h).
  void set_dropout_key(uint64_t key) { dropout_key_ = key; }

  torch::nn::Linear lin_src{nullptr};   // in_dim -> heads * head_dim, no bias (messages)
  torch::nn::Linear lin_dst{nullptr};   // in_dim -> heads * head_dim, no bias
  torch::Tensor att;                    // [heads, head_dim]
  torch::Tensor bias;                   // [out_dim]
  torch::nn::Linear lin_edge{nullptr};  // edge_dim > 0 only: edge_dim -> heads * head_dim

 private:
  int64_t head_dim_;
  int64_t heads_;
  bool concat_;
  double attention_dropout_;
  int64_t edge_dim_;
  uint64_t dropout_key_ = 0;
};

// GINE (Hu et al. 2020, "Strategies for pre-training graph neural networks"; PyG's
// GINEConv(nn, edge_dim=...) with train_eps=False): GIN with edge features,
//   out_i = MLP((1 + eps) x_i + sum_{j in N(i)} ReLU(x_j + W_e e_ji + b_e))
// with eps fixed at 0 (PyG's default; not learned), W_e, b_e: edge_dim -> in_dim (PyG's
// lin, with bias), and MLP = Linear(in, mid) -> ReLU -> Linear(mid, out), both with bias,
// mid = max(in, out). The inner width is never narrower than the input: an output layer
// with mid = out (a handful of classes) squeezed its input through that many ReLUs, which
// all die early in training (2 layers stuck at chance, loss ln(classes)).
// The edge features are block.edge_feat [E, edge_dim] (required). Messages run on gine_sum
// (message_passing.h). Throws partita::Error if edge_dim < 1: GINE needs edge features.
class GINEConv : public BlockConv {
 public:
  GINEConv(int64_t in_dim, int64_t out_dim, int64_t edge_dim);
  torch::Tensor forward(const BlockTensors& block, const torch::Tensor& x_src) override;
  int64_t out_dim() const override { return out_dim_; }
  double matmul_flops(const BlockTensors& block) const override;

  torch::nn::Linear lin_edge{nullptr};  // edge_dim -> in_dim, with bias
  torch::nn::Linear mlp1{nullptr};      // in_dim -> max(in_dim, out_dim)
  torch::nn::Linear mlp2{nullptr};      // max(in_dim, out_dim) -> out_dim

 private:
  int64_t out_dim_;
  int64_t edge_dim_;
};

}  // namespace partita::nn
