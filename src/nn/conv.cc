#include "partita/nn/conv.h"

#include <torch/torch.h>

#include <limits>

#include "partita/core/error.h"

namespace partita::nn {

namespace {

void check_input(const BlockTensors& block, const torch::Tensor& x_src, int64_t in_dim,
                 const char* layer) {
  PARTITA_CHECK(x_src.dim() == 2 && x_src.size(0) == block.num_src && x_src.size(1) == in_dim,
                Error, "{}: x_src must be [{}, {}], got dim {} size(0) {}", layer, block.num_src,
                in_dim, x_src.dim(), x_src.dim() > 0 ? x_src.size(0) : 0);
}

}  // namespace

SAGEConv::SAGEConv(int64_t in_dim, int64_t out_dim) : out_dim_(out_dim) {
  lin_neigh = register_module("lin_neigh", torch::nn::Linear(in_dim, out_dim));
  lin_root = register_module(
      "lin_root", torch::nn::Linear(torch::nn::LinearOptions(in_dim, out_dim).bias(false)));
}

torch::Tensor SAGEConv::forward(const BlockTensors& block, const torch::Tensor& x_src) {
  check_input(block, x_src, lin_root->options.in_features(), "SAGEConv");
  auto sum = torch::zeros({block.num_dst, x_src.size(1)}, x_src.options())
                 .index_add_(0, block.edge_dst, x_src.index_select(0, block.indices));
  auto deg = block.deg_dst.clamp_min(1).to(x_src.scalar_type()).unsqueeze(1);
  return lin_neigh->forward(sum / deg) + lin_root->forward(x_src.slice(0, 0, block.num_dst));
}

GCNConv::GCNConv(int64_t in_dim, int64_t out_dim) : out_dim_(out_dim) {
  lin = register_module("lin",
                        torch::nn::Linear(torch::nn::LinearOptions(in_dim, out_dim).bias(false)));
  bias = register_parameter("bias", torch::zeros({out_dim}));
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(lin->weight);  // Glorot, as in the GCN paper
}

torch::Tensor GCNConv::forward(const BlockTensors& block, const torch::Tensor& x_src) {
  check_input(block, x_src, lin->options.in_features(), "GCNConv");
  auto h = lin->forward(x_src);  // [num_src, out]
  const auto type = h.scalar_type();
  if (!block.graph_deg.defined()) {
    auto inv_dst = (block.deg_dst.to(type) + 1).rsqrt();  // [num_dst]
    auto inv_src = (block.deg_src.to(type) + 1).rsqrt();  // [num_src]
    auto hs = h * inv_src.unsqueeze(1);
    auto agg = hs.slice(0, 0, block.num_dst).clone();  // self loops
    agg.index_add_(0, block.edge_dst, hs.index_select(0, block.indices));
    return agg * inv_dst.unsqueeze(1) + bias;
  }
  PARTITA_CHECK(block.graph_deg.size(0) == block.num_src, Error,
                "GCNConv: graph_deg has {} entries for {} src nodes", block.graph_deg.size(0),
                block.num_src);
  auto inv_src = (block.graph_deg.to(type) + 1).rsqrt();  // [num_src]; dst rows first
  auto inv_dst = inv_src.slice(0, 0, block.num_dst);
  auto hs = h * inv_src.unsqueeze(1);
  auto neigh = torch::zeros({block.num_dst, h.size(1)}, h.options())
                   .index_add_(0, block.edge_dst, hs.index_select(0, block.indices));
  auto scale = block.graph_deg.slice(0, 0, block.num_dst).to(type) /
               block.deg_dst.clamp_min(1).to(type);  // d_i / k_i
  auto agg = hs.slice(0, 0, block.num_dst) + neigh * scale.unsqueeze(1);
  return agg * inv_dst.unsqueeze(1) + bias;
}

GATConv::GATConv(int64_t in_dim, int64_t head_dim, int64_t heads, bool concat)
    : head_dim_(head_dim), heads_(heads), concat_(concat) {
  lin = register_module(
      "lin", torch::nn::Linear(torch::nn::LinearOptions(in_dim, heads * head_dim).bias(false)));
  att_src = register_parameter("att_src", torch::empty({heads, head_dim}));
  att_dst = register_parameter("att_dst", torch::empty({heads, head_dim}));
  bias = register_parameter("bias", torch::zeros({out_dim()}));
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(att_src);
  torch::nn::init::xavier_uniform_(att_dst);
}

torch::Tensor GATConv::forward(const BlockTensors& block, const torch::Tensor& x_src) {
  return forward_with_attention(block, x_src, nullptr);
}

torch::Tensor GATConv::forward_with_attention(const BlockTensors& block, const torch::Tensor& x_src,
                                              torch::Tensor* alpha) {
  check_input(block, x_src, lin->options.in_features(), "GATConv");
  auto h = lin->forward(x_src).view({block.num_src, heads_, head_dim_});
  auto self = torch::arange(block.num_dst, block.indices.options());
  auto src = torch::cat({block.indices, self});  // edges, then one self loop per dst
  auto dst = torch::cat({block.edge_dst, self});
  auto score_src = (h * att_src).sum(-1);                             // [num_src, K]
  auto score_dst = (h.slice(0, 0, block.num_dst) * att_dst).sum(-1);  // [num_dst, K]
  auto e = torch::leaky_relu(score_src.index_select(0, src) + score_dst.index_select(0, dst),
                             0.2);  // [E', K]
  // Per-dst max (no gradient needed: softmax is shift-invariant). Every dst has its self
  // loop, so every max is finite.
  auto max =
      torch::full({block.num_dst, heads_}, -std::numeric_limits<float>::infinity(), e.options())
          .index_reduce_(0, dst, e.detach(), "amax", true);
  auto ex = (e - max.index_select(0, dst)).exp();
  auto denom = torch::zeros({block.num_dst, heads_}, e.options()).index_add_(0, dst, ex);
  auto a = ex / denom.index_select(0, dst);
  auto out = torch::zeros({block.num_dst, heads_, head_dim_}, h.options())
                 .index_add_(0, dst, h.index_select(0, src) * a.unsqueeze(-1));
  if (alpha != nullptr) *alpha = a;
  out = concat_ ? out.reshape({block.num_dst, heads_ * head_dim_}) : out.mean(1);
  return out + bias;
}

}  // namespace partita::nn
