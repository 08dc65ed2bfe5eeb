#include "partita/nn/conv.h"

#include <torch/torch.h>

#include <algorithm>

#include "partita/core/error.h"
#include "partita/nn/dropout.h"
#include "partita/nn/message_passing.h"
#include "tensor_types.h"

namespace partita::nn {

namespace {

void check_input(const BlockTensors& block, const torch::Tensor& x_src, int64_t in_dim,
                 const char* layer) {
  PARTITA_CHECK(x_src.dim() == 2 && x_src.size(0) == block.num_src && x_src.size(1) == in_dim,
                Error, "{}: x_src must be [{}, {}], got dim {} size(0) {}", layer, block.num_src,
                in_dim, x_src.dim(), x_src.dim() > 0 ? x_src.size(0) : 0);
}

// The edge features of `block` for a layer built with edge_dim > 0, checked.
const torch::Tensor& checked_edge_feat(const BlockTensors& block, int64_t edge_dim,
                                       const char* layer) {
  const torch::Tensor& f = block.edge_feat;
  PARTITA_CHECK(f.defined(), Error,
                "{}: built with edge_dim {} but the block carries no edge features "
                "(train --edge-features)",
                layer, edge_dim);
  PARTITA_CHECK(f.dim() == 2 && f.size(0) == block.num_edges() && f.size(1) == edge_dim, Error,
                "{}: edge_feat must be [{}, {}], got {} dims, size {} x {}", layer,
                block.num_edges(), edge_dim, f.dim(), f.dim() > 0 ? f.size(0) : 0,
                f.dim() > 1 ? f.size(1) : 0);
  return f;
}

}  // namespace

torch::Tensor linear_as_input(torch::nn::Linear& lin, const torch::Tensor& x) {
  if (x.scalar_type() == lin->weight.scalar_type()) return lin->forward(x);
  const torch::Tensor bias = lin->bias.defined() ? lin->bias.to(x.scalar_type()) : torch::Tensor();
  return torch::nn::functional::linear(x, lin->weight.to(x.scalar_type()), bias);
}

SAGEConv::SAGEConv(int64_t in_dim, int64_t out_dim) : out_dim_(out_dim) {
  lin_neigh = register_module("lin_neigh", torch::nn::Linear(in_dim, out_dim));
  lin_root = register_module(
      "lin_root", torch::nn::Linear(torch::nn::LinearOptions(in_dim, out_dim).bias(false)));
}

double SAGEConv::matmul_flops(const BlockTensors& block) const {
  return 2.0 * 2.0 * static_cast<double>(block.num_dst) *
         static_cast<double>(lin_root->options.in_features()) * static_cast<double>(out_dim_);
}

torch::Tensor SAGEConv::forward(const BlockTensors& block, const torch::Tensor& x_src) {
  check_input(block, x_src, lin_root->options.in_features(), "SAGEConv");
  return linear_as_input(lin_neigh, aggregate_mean(block, x_src)) +
         linear_as_input(lin_root, x_src.slice(0, 0, block.num_dst));
}

GCNConv::GCNConv(int64_t in_dim, int64_t out_dim) : out_dim_(out_dim) {
  lin = register_module("lin",
                        torch::nn::Linear(torch::nn::LinearOptions(in_dim, out_dim).bias(false)));
  bias = register_parameter("bias", torch::zeros({out_dim}));
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(lin->weight);  // Glorot, as in the GCN paper
}

bool GCNConv::transforms_first(const BlockTensors& block) const {
  const double in = static_cast<double>(lin->options.in_features());
  const double out = static_cast<double>(out_dim_);
  const double e = static_cast<double>(block.num_edges());
  return static_cast<double>(block.num_src) * in * out * 2 + e * out <
         static_cast<double>(block.num_dst) * in * out * 2 + e * in;
}

double GCNConv::matmul_flops(const BlockTensors& block) const {
  const auto rows = transforms_first(block) ? block.num_src : block.num_dst;
  return 2.0 * static_cast<double>(rows) * static_cast<double>(lin->options.in_features()) *
         static_cast<double>(out_dim_);
}

torch::Tensor GCNConv::forward(const BlockTensors& block, const torch::Tensor& x_src) {
  const int64_t in_dim = lin->options.in_features();
  check_input(block, x_src, in_dim, "GCNConv");
  // out_i = self_i * x_i + sum_e w_e x_j (then W, then + b): per-edge and self weights.
  const auto type = compute_type(x_src.scalar_type());
  torch::Tensor edge_w, self_w;
  if (!block.graph_deg.defined()) {
    auto inv_dst = (block.deg_dst.to(type) + 1).rsqrt();  // [num_dst]
    auto inv_src = (block.deg_src.to(type) + 1).rsqrt();  // [num_src]
    edge_w = inv_dst.index_select(0, block.edge_dst) * inv_src.index_select(0, block.indices);
    self_w = inv_dst * inv_src.slice(0, 0, block.num_dst);
  } else {
    PARTITA_CHECK(block.graph_deg.size(0) == block.num_src, Error,
                  "GCNConv: graph_deg has {} entries for {} src nodes", block.graph_deg.size(0),
                  block.num_src);
    auto inv_src = (block.graph_deg.to(type) + 1).rsqrt();  // [num_src]; dst rows first
    auto inv_dst = inv_src.slice(0, 0, block.num_dst);
    auto scale = block.graph_deg.slice(0, 0, block.num_dst).to(type) /
                 block.deg_dst.clamp_min(1).to(type);  // d_i / k_i
    edge_w =
        (inv_dst * scale).index_select(0, block.edge_dst) * inv_src.index_select(0, block.indices);
    self_w = inv_dst * inv_dst;  // 1 / (d_i + 1)
  }
  self_w = self_w.to(x_src.scalar_type()).unsqueeze(1);
  if (transforms_first(block)) {
    const torch::Tensor h = linear_as_input(lin, x_src);
    return aggregate(block, h, edge_w) + h.slice(0, 0, block.num_dst) * self_w +
           bias.to(h.scalar_type());
  }
  const torch::Tensor agg =
      aggregate(block, x_src, edge_w) + x_src.slice(0, 0, block.num_dst) * self_w;
  return linear_as_input(lin, agg) + bias.to(x_src.scalar_type());
}

GATConv::GATConv(int64_t in_dim, int64_t head_dim, int64_t heads, bool concat,
                 double attention_dropout, int64_t edge_dim)
    : head_dim_(head_dim),
      heads_(heads),
      concat_(concat),
      attention_dropout_(attention_dropout),
      edge_dim_(edge_dim) {
  PARTITA_CHECK(attention_dropout >= 0 && attention_dropout < 1, Error,
                "GATConv: attention dropout must be in [0, 1), got {}", attention_dropout);
  PARTITA_CHECK(edge_dim >= 0, Error, "GATConv: edge_dim must be >= 0, got {}", edge_dim);
  lin = register_module(
      "lin", torch::nn::Linear(torch::nn::LinearOptions(in_dim, heads * head_dim).bias(false)));
  att_src = register_parameter("att_src", torch::empty({heads, head_dim}));
  att_dst = register_parameter("att_dst", torch::empty({heads, head_dim}));
  bias = register_parameter("bias", torch::zeros({out_dim()}));
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(lin->weight);  // Glorot, as in the GAT paper
  torch::nn::init::xavier_uniform_(att_src);
  torch::nn::init::xavier_uniform_(att_dst);
  if (edge_dim == 0) return;
  // Registered and drawn after the others: edge_dim 0 draws exactly what it always did.
  lin_edge = register_module(
      "lin_edge",
      torch::nn::Linear(torch::nn::LinearOptions(edge_dim, heads * head_dim).bias(false)));
  att_edge = register_parameter("att_edge", torch::empty({heads, head_dim}));
  torch::nn::init::xavier_uniform_(lin_edge->weight);
  torch::nn::init::xavier_uniform_(att_edge);
}

double GATConv::matmul_flops(const BlockTensors& block) const {
  const double k_d = static_cast<double>(heads_ * head_dim_);
  const double edges = static_cast<double>(block.num_edges() + block.num_dst);  // self loops
  return 2.0 * static_cast<double>(block.num_src) *
             static_cast<double>(lin->options.in_features()) * k_d +
         2.0 * edges * static_cast<double>(edge_dim_) * k_d;
}

torch::Tensor GATConv::forward(const BlockTensors& block, const torch::Tensor& x_src) {
  return forward_with_attention(block, x_src, nullptr);
}

torch::Tensor GATConv::forward_with_attention(const BlockTensors& block, const torch::Tensor& x_src,
                                              torch::Tensor* alpha) {
  check_input(block, x_src, lin->options.in_features(), "GATConv");
  if (edge_dim_ > 0) checked_edge_feat(block, edge_dim_, "GATConv");
  const torch::Tensor h = linear_as_input(lin, x_src);  // [num_src, K * D]
  const auto hv = h.view({block.num_src, heads_, head_dim_});
  const auto score_src = (hv * att_src.to(h.scalar_type())).sum(-1);  // [num_src, K]
  const auto score_dst =
      (hv.slice(0, 0, block.num_dst) * att_dst.to(h.scalar_type())).sum(-1);  // [num_dst, K]
  // Every dst attends over its in-edges and itself: the self loop leads each row (with the
  // mean of its row's edge features).
  const BlockTensors looped = with_self_loops(block);
  torch::Tensor score_edge;  // [E + num_dst, K]
  if (edge_dim_ > 0) {
    const torch::Tensor he = linear_as_input(lin_edge, looped.edge_feat.to(h.scalar_type()));
    score_edge =
        (he.view({looped.num_edges(), heads_, head_dim_}) * att_edge.to(he.scalar_type())).sum(-1);
  }
  torch::Tensor a = gat_edge_softmax(looped, score_src, score_dst, 0.2, score_edge);
  if (alpha != nullptr) {
    // Back to the documented order: block edges first, then the self loops.
    const auto edge_rows =
        torch::arange(block.num_edges(), block.edge_dst.options()) + block.edge_dst + 1;
    const auto self_rows = looped.indptr.slice(0, 0, block.num_dst);
    *alpha = a.index_select(0, torch::cat({edge_rows, self_rows}));
  }
  if (is_training() && attention_dropout_ > 0)
    a = counter_dropout(a, attention_dropout_, dropout_key_);
  torch::Tensor out = aggregate(looped, h, a);  // [num_dst, K * D]
  if (!concat_) out = out.view({block.num_dst, heads_, head_dim_}).mean(1);
  return out + bias.to(out.scalar_type());
}

GATv2Conv::GATv2Conv(int64_t in_dim, int64_t head_dim, int64_t heads, bool concat,
                     double attention_dropout, int64_t edge_dim)
    : head_dim_(head_dim),
      heads_(heads),
      concat_(concat),
      attention_dropout_(attention_dropout),
      edge_dim_(edge_dim) {
  PARTITA_CHECK(attention_dropout >= 0 && attention_dropout < 1, Error,
                "GATv2Conv: attention dropout must be in [0, 1), got {}", attention_dropout);
  PARTITA_CHECK(edge_dim >= 0, Error, "GATv2Conv: edge_dim must be >= 0, got {}", edge_dim);
  const auto linear = [&](int64_t in) {
    return torch::nn::Linear(torch::nn::LinearOptions(in, heads * head_dim).bias(false));
  };
  lin_src = register_module("lin_src", linear(in_dim));
  lin_dst = register_module("lin_dst", linear(in_dim));
  att = register_parameter("att", torch::empty({heads, head_dim}));
  bias = register_parameter("bias", torch::zeros({out_dim()}));
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(lin_src->weight);
  torch::nn::init::xavier_uniform_(lin_dst->weight);
  torch::nn::init::xavier_uniform_(att);
  if (edge_dim == 0) return;
  lin_edge = register_module("lin_edge", linear(edge_dim));
  torch::nn::init::xavier_uniform_(lin_edge->weight);
}

double GATv2Conv::matmul_flops(const BlockTensors& block) const {
  const double k_d = static_cast<double>(heads_ * head_dim_);
  const double in = static_cast<double>(lin_src->options.in_features());
  const double edges = static_cast<double>(block.num_edges() + block.num_dst);  // self loops
  return 2.0 * static_cast<double>(block.num_src + block.num_dst) * in * k_d +
         2.0 * edges * static_cast<double>(edge_dim_) * k_d;
}

torch::Tensor GATv2Conv::forward(const BlockTensors& block, const torch::Tensor& x_src) {
  check_input(block, x_src, lin_src->options.in_features(), "GATv2Conv");
  if (edge_dim_ > 0) checked_edge_feat(block, edge_dim_, "GATv2Conv");
  const torch::Tensor hs = linear_as_input(lin_src, x_src);                             // [S, KD]
  const torch::Tensor hd = linear_as_input(lin_dst, x_src.slice(0, 0, block.num_dst));  // [N, KD]
  // Every dst attends over its in-edges and itself (the self loop leads each row).
  const BlockTensors looped = with_self_loops(block);
  const int64_t edges = looped.num_edges();
  // The pre-activation of every (looped) edge, one row per edge: W_src x_j + W_dst x_i (+ W_e e).
  torch::Tensor pre = hs.index_select(0, looped.indices) + hd.index_select(0, looped.edge_dst);
  if (edge_dim_ > 0) pre = pre + linear_as_input(lin_edge, looped.edge_feat.to(hs.scalar_type()));
  const torch::ScalarType score_type = compute_type(hs.scalar_type());
  const torch::Tensor logits =
      (torch::leaky_relu(pre, 0.2).to(score_type).view({edges, heads_, head_dim_}) *
       att.to(score_type))
          .sum(-1);  // [E + N, K]
  // The edge softmax of gat_edge_softmax with the whole logit as its edge term: zero
  // src/dst scores and slope 1 (LeakyReLU_1 is the identity).
  const torch::Tensor zero_src = torch::zeros({block.num_src, heads_}, logits.options());
  const torch::Tensor zero_dst = torch::zeros({block.num_dst, heads_}, logits.options());
  torch::Tensor a = gat_edge_softmax(looped, zero_src, zero_dst, /*negative_slope=*/1.0, logits);
  if (is_training() && attention_dropout_ > 0)
    a = counter_dropout(a, attention_dropout_, dropout_key_);
  torch::Tensor out = aggregate(looped, hs, a);  // [N, KD]
  if (!concat_) out = out.view({block.num_dst, heads_, head_dim_}).mean(1);
  return out + bias.to(out.scalar_type());
}

GINEConv::GINEConv(int64_t in_dim, int64_t out_dim, int64_t edge_dim)
    : out_dim_(out_dim), edge_dim_(edge_dim) {
  PARTITA_CHECK(edge_dim >= 1, Error,
                "GINEConv: gine needs edge features (edge_dim {}); train it with "
                "--edge-features on a partition that has them",
                edge_dim);
  lin_edge = register_module("lin_edge", torch::nn::Linear(edge_dim, in_dim));
  const int64_t mid = std::max(in_dim, out_dim);
  mlp1 = register_module("mlp1", torch::nn::Linear(in_dim, mid));
  mlp2 = register_module("mlp2", torch::nn::Linear(mid, out_dim));
}

double GINEConv::matmul_flops(const BlockTensors& block) const {
  const double in = static_cast<double>(mlp1->options.in_features());
  const double mid = static_cast<double>(mlp1->options.out_features());
  const double out = static_cast<double>(out_dim_);
  return 2.0 * static_cast<double>(block.num_edges()) * static_cast<double>(edge_dim_) * in +
         2.0 * static_cast<double>(block.num_dst) * (in * mid + mid * out);
}

torch::Tensor GINEConv::forward(const BlockTensors& block, const torch::Tensor& x_src) {
  check_input(block, x_src, mlp1->options.in_features(), "GINEConv");
  const torch::Tensor& f = checked_edge_feat(block, edge_dim_, "GINEConv");
  const torch::Tensor edge_x = linear_as_input(lin_edge, f.to(x_src.scalar_type()));  // [E, F]
  const torch::Tensor h = x_src.slice(0, 0, block.num_dst) + gine_sum(block, x_src, edge_x);
  return linear_as_input(mlp2, torch::relu(linear_as_input(mlp1, h)));
}

}  // namespace partita::nn
