// Autograd wrappers of the fused message-passing kernels (see message_passing.h); blocks
// on other devices (and CPU ones under KernelPathScope(kGeneric)) take the torch-op
// versions of generic_ops.h.
#include "partita/nn/message_passing.h"

#include <torch/torch.h>

#include "generic_ops.h"
#include "kernels.h"
#include "partita/core/error.h"
#include "partita/nn/kernel_path.h"
#include "tensor_types.h"

namespace partita::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

kernels::Csr by_dst(const torch::Tensor& indptr, const torch::Tensor& indices) {
  return {indptr.size(0) - 1, indptr.data_ptr<int64_t>(), indices.data_ptr<int64_t>(), nullptr};
}

kernels::Csr by_src(const torch::Tensor& t_indptr, const torch::Tensor& t_dst,
                    const torch::Tensor& t_eid) {
  return {t_indptr.size(0) - 1, t_indptr.data_ptr<int64_t>(), t_dst.data_ptr<int64_t>(),
          t_eid.data_ptr<int64_t>()};
}

void check_block(const BlockTensors& b, const char* what) {
  PARTITA_CHECK(b.indptr.defined() && b.t_indptr.defined(), Error,
                "{}: needs a block with its transposed rows (to_block_tensors)", what);
}

// Every tensor of an op must be on its block's device.
void check_device(const BlockTensors& b, const torch::Tensor& t, const char* what,
                  const char* name) {
  PARTITA_CHECK(t.device() == b.indptr.device(), Error, "{}: {} is on {}, the block on {}", what,
                name, t.device().str(), b.indptr.device().str());
}

// Index tensors travel as inputs (never differentiable) so that backward finds them.
// Unweighted (`weighted` false), `weight_in` is a defined placeholder and is ignored: torch
// 1.13's Function::apply cannot take an undefined input once another one requires grad.
struct AggregateFn : torch::autograd::Function<AggregateFn> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight_in, bool weighted,
                               const torch::Tensor& indptr, const torch::Tensor& indices,
                               const torch::Tensor& t_indptr, const torch::Tensor& t_dst,
                               const torch::Tensor& t_eid) {
    RECORD_USER_SCOPE("partita::spmm_forward");
    const torch::Tensor weight = weighted ? weight_in : torch::Tensor();
    const kernels::Dtype dt = kernel_dtype(x, "aggregate");
    const torch::Tensor xc = x.contiguous();
    const int64_t heads = weight.defined() && weight.dim() == 2 ? weight.size(1) : 1;
    const int64_t width = x.size(1);
    torch::Tensor out = torch::empty({indptr.size(0) - 1, width}, x.options());
    kernels::spmm(by_dst(indptr, indices), xc.data_ptr(),
                  weight.defined() ? weight.data_ptr() : nullptr, heads, width / heads,
                  out.data_ptr(), dt);
    const bool w_grad = weight.defined() && weight.requires_grad();
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["width"] = width;
    ctx->saved_data["dtype"] = static_cast<int64_t>(x.scalar_type());
    ctx->saved_data["x_grad"] = x.requires_grad();
    ctx->saved_data["w_grad"] = w_grad;
    // x is kept only for the weights' gradient.
    ctx->save_for_backward(
        {w_grad ? xc : torch::Tensor(), weight, indptr, indices, t_indptr, t_dst, t_eid});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    RECORD_USER_SCOPE("partita::spmm_backward");
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& x = saved[0];
    const torch::Tensor& weight = saved[1];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const int64_t width = ctx->saved_data["width"].toInt();
    const auto type = static_cast<torch::ScalarType>(ctx->saved_data["dtype"].toInt());
    const torch::Tensor g = grads[0].to(type).contiguous();
    const kernels::Dtype dt = kernel_dtype(g, "aggregate");
    torch::Tensor grad_x, grad_w;
    if (ctx->saved_data["x_grad"].toBool()) {
      grad_x = torch::empty({saved[4].size(0) - 1, width}, g.options());
      kernels::spmm(by_src(saved[4], saved[5], saved[6]), g.data_ptr(),
                    weight.defined() ? weight.data_ptr() : nullptr, heads, width / heads,
                    grad_x.data_ptr(), dt);
    }
    if (ctx->saved_data["w_grad"].toBool()) {
      grad_w = torch::empty({saved[3].size(0), heads}, compute_type(type));
      kernels::edge_dot(by_dst(saved[2], saved[3]), g.data_ptr(), x.data_ptr(), heads,
                        width / heads, grad_w.data_ptr(), dt);
      grad_w = grad_w.view(weight.sizes());
    }
    return {grad_x, grad_w, {}, {}, {}, {}, {}, {}};
  }
};

// With `has_edge` false, `score_edge` is a defined placeholder and is ignored (as
// AggregateFn's weights).
struct GatSoftmaxFn : torch::autograd::Function<GatSoftmaxFn> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& score_src,
                               const torch::Tensor& score_dst, const torch::Tensor& score_edge,
                               bool has_edge, const torch::Tensor& indptr,
                               const torch::Tensor& indices, const torch::Tensor& t_indptr,
                               const torch::Tensor& t_dst, const torch::Tensor& t_eid,
                               double slope) {
    RECORD_USER_SCOPE("partita::gat_softmax_forward");
    const torch::ScalarType type = compute_type(score_src.scalar_type());
    const torch::Tensor ss = score_src.to(type).contiguous();
    const torch::Tensor sd = score_dst.to(type).contiguous();
    const torch::Tensor se = has_edge ? score_edge.to(type).contiguous() : torch::Tensor();
    const int64_t heads = ss.size(1);
    torch::Tensor alpha = torch::empty({indices.size(0), heads}, type);
    kernels::gat_softmax_forward(by_dst(indptr, indices), ss.data_ptr(), sd.data_ptr(),
                                 has_edge ? se.data_ptr() : nullptr, heads, slope, alpha.data_ptr(),
                                 kernel_dtype(alpha, "gat_edge_softmax"));
    ctx->saved_data["slope"] = slope;
    ctx->saved_data["has_edge"] = has_edge;
    ctx->saved_data["src_type"] = static_cast<int64_t>(score_src.scalar_type());
    ctx->saved_data["dst_type"] = static_cast<int64_t>(score_dst.scalar_type());
    ctx->saved_data["edge_type"] = static_cast<int64_t>(score_edge.scalar_type());
    ctx->save_for_backward({ss, sd, se, alpha, indptr, indices, t_indptr, t_dst, t_eid});
    return alpha;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    RECORD_USER_SCOPE("partita::gat_softmax_backward");
    const auto s = ctx->get_saved_variables();
    const torch::Tensor &ss = s[0], &sd = s[1], &se = s[2], &alpha = s[3];
    const bool has_edge = ctx->saved_data["has_edge"].toBool();
    const int64_t heads = ss.size(1);
    const torch::Tensor ga = grads[0].to(alpha.scalar_type()).contiguous();
    torch::Tensor grad_pre = torch::empty_like(alpha);
    torch::Tensor grad_ss = torch::empty_like(ss);
    torch::Tensor grad_sd = torch::empty_like(sd);
    kernels::gat_softmax_backward(
        by_dst(s[4], s[5]), by_src(s[6], s[7], s[8]), ss.data_ptr(), sd.data_ptr(),
        has_edge ? se.data_ptr() : nullptr, alpha.data_ptr(), ga.data_ptr(), heads,
        ctx->saved_data["slope"].toDouble(), grad_pre.data_ptr(), grad_ss.data_ptr(),
        grad_sd.data_ptr(), kernel_dtype(alpha, "gat_edge_softmax"));
    const auto src_type = static_cast<torch::ScalarType>(ctx->saved_data["src_type"].toInt());
    const auto dst_type = static_cast<torch::ScalarType>(ctx->saved_data["dst_type"].toInt());
    const auto edge_type = static_cast<torch::ScalarType>(ctx->saved_data["edge_type"].toInt());
    return {grad_ss.to(src_type),
            grad_sd.to(dst_type),
            has_edge ? grad_pre.to(edge_type) : torch::Tensor(),
            {},
            {},
            {},
            {},
            {},
            {},
            {}};
  }
};

struct GineSumFn : torch::autograd::Function<GineSumFn> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& edge_x, const torch::Tensor& indptr,
                               const torch::Tensor& indices, const torch::Tensor& t_indptr,
                               const torch::Tensor& t_dst, const torch::Tensor& t_eid) {
    RECORD_USER_SCOPE("partita::gine_sum_forward");
    const kernels::Dtype dt = kernel_dtype(x, "gine_sum");
    const torch::Tensor xc = x.contiguous();
    const torch::Tensor ec = edge_x.contiguous();
    const int64_t width = x.size(1);
    torch::Tensor out = torch::empty({indptr.size(0) - 1, width}, x.options());
    kernels::relu_sum(by_dst(indptr, indices), xc.data_ptr(), ec.data_ptr(), width, out.data_ptr(),
                      dt);
    ctx->save_for_backward({xc, ec, indptr, indices, t_indptr, t_dst, t_eid});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    RECORD_USER_SCOPE("partita::gine_sum_backward");
    const auto s = ctx->get_saved_variables();
    const torch::Tensor &x = s[0], &e = s[1];
    const torch::Tensor g = grads[0].to(x.scalar_type()).contiguous();
    torch::Tensor grad_x = torch::empty_like(x);
    torch::Tensor grad_e = torch::empty_like(e);
    kernels::relu_sum_backward(by_dst(s[2], s[3]), by_src(s[4], s[5], s[6]), x.data_ptr(),
                               e.data_ptr(), g.data_ptr(), x.size(1), grad_x.data_ptr(),
                               grad_e.data_ptr(), kernel_dtype(x, "gine_sum"));
    return {grad_x, grad_e, {}, {}, {}, {}, {}};
  }
};

}  // namespace

torch::Tensor aggregate(const BlockTensors& block, const torch::Tensor& x,
                        const torch::Tensor& edge_weight) {
  check_block(block, "aggregate");
  kernel_dtype(x, "aggregate");
  PARTITA_CHECK(x.dim() == 2 && x.size(0) == block.num_src, Error,
                "aggregate: x must be [{}, F], got {} dims, {} rows", block.num_src, x.dim(),
                x.dim() > 0 ? x.size(0) : 0);
  check_device(block, x, "aggregate", "x");
  torch::Tensor w = edge_weight;
  if (w.defined()) {
    PARTITA_CHECK(w.scalar_type() == compute_type(x.scalar_type()) &&
                      (w.dim() == 1 || w.dim() == 2) && w.size(0) == block.num_edges(),
                  Error, "aggregate: edge weights must be {} [{}] or [{}, H]",
                  c10::toString(compute_type(x.scalar_type())), block.num_edges(),
                  block.num_edges());
    PARTITA_CHECK(w.dim() == 1 || (w.size(1) >= 1 && x.size(1) % w.size(1) == 0), Error,
                  "aggregate: {} features do not split into {} heads", x.size(1), w.size(1));
    check_device(block, w, "aggregate", "edge_weight");
    w = w.contiguous();
  }
  if (uses_generic_ops(block.indptr.device())) return generic::aggregate(block, x, w);
  const bool weighted = w.defined();
  if (!weighted) w = torch::empty({0}, x.options().dtype(compute_type(x.scalar_type())));
  return AggregateFn::apply(x, w, weighted, block.indptr, block.indices, block.t_indptr,
                            block.t_dst, block.t_eid);
}

torch::Tensor aggregate_mean(const BlockTensors& block, const torch::Tensor& x) {
  const torch::Tensor inv_deg =
      block.deg_dst.clamp_min(1).to(compute_type(x.scalar_type())).reciprocal();
  return aggregate(block, x, inv_deg.index_select(0, block.edge_dst));
}

torch::Tensor relation_mean(const BlockTensors& block, const torch::Tensor& x) {
  check_block(block, "relation_mean");
  kernel_dtype(x, "relation_mean");
  PARTITA_CHECK(block.typed() && block.rel_indptr.defined() && block.t_rel_entry.defined(), Error,
                "relation_mean: needs a typed block (sample::Block::etypes)");
  PARTITA_CHECK(x.dim() == 2 && x.size(0) == block.num_src, Error,
                "relation_mean: x must be [{}, F], got {} dims, {} rows", block.num_src, x.dim(),
                x.dim() > 0 ? x.size(0) : 0);
  check_device(block, x, "relation_mean", "x");
  if (uses_generic_ops(block.indptr.device())) return generic::relation_mean(block, x);
  // The relation rows are a CSC over the entries (the edges regrouped), so AggregateFn runs
  // on them unchanged: forward gathers rel_src into each row, backward gathers each src's
  // gradient from rows t_rel_row with the weights of entries t_rel_entry. Every entry of a
  // row weighs 1 / (the row's entry count).
  const torch::Tensor count = block.rel_indptr.slice(0, 1) - block.rel_indptr.slice(0, 0, -1);
  const torch::Tensor weight = count.to(compute_type(x.scalar_type()))
                                   .reciprocal()
                                   .repeat_interleave(count, /*dim=*/0, block.num_edges());
  return AggregateFn::apply(x, weight, /*weighted=*/true, block.rel_indptr, block.rel_src,
                            block.t_indptr, block.t_rel_row, block.t_rel_entry);
}

torch::Tensor gat_edge_softmax(const BlockTensors& block, const torch::Tensor& score_src,
                               const torch::Tensor& score_dst, double negative_slope,
                               const torch::Tensor& score_edge) {
  check_block(block, "gat_edge_softmax");
  PARTITA_CHECK(score_src.dim() == 2 && score_dst.dim() == 2 &&
                    score_src.size(0) == block.num_src && score_dst.size(0) == block.num_dst &&
                    score_src.size(1) == score_dst.size(1) && score_src.size(1) >= 1,
                Error, "gat_edge_softmax: scores must be [{}, H] and [{}, H]", block.num_src,
                block.num_dst);
  check_device(block, score_src, "gat_edge_softmax", "score_src");
  check_device(block, score_dst, "gat_edge_softmax", "score_dst");
  if (score_edge.defined()) {
    PARTITA_CHECK(score_edge.dim() == 2 && score_edge.size(0) == block.num_edges() &&
                      score_edge.size(1) == score_src.size(1),
                  Error, "gat_edge_softmax: score_edge must be [{}, {}]", block.num_edges(),
                  score_src.size(1));
    check_device(block, score_edge, "gat_edge_softmax", "score_edge");
  }
  if (uses_generic_ops(block.indptr.device()))
    return generic::gat_edge_softmax(block, score_src, score_dst, negative_slope, score_edge);
  const bool has_edge = score_edge.defined();
  const torch::Tensor edge =
      has_edge ? score_edge : torch::empty({0}, score_src.options().dtype(torch::kFloat32));
  return GatSoftmaxFn::apply(score_src, score_dst, edge, has_edge, block.indptr, block.indices,
                             block.t_indptr, block.t_dst, block.t_eid, negative_slope);
}

torch::Tensor gine_sum(const BlockTensors& block, const torch::Tensor& x,
                       const torch::Tensor& edge_x) {
  check_block(block, "gine_sum");
  kernel_dtype(x, "gine_sum");
  PARTITA_CHECK(x.dim() == 2 && x.size(0) == block.num_src, Error,
                "gine_sum: x must be [{}, F], got {} dims, {} rows", block.num_src, x.dim(),
                x.dim() > 0 ? x.size(0) : 0);
  PARTITA_CHECK(edge_x.dim() == 2 && edge_x.size(0) == block.num_edges() &&
                    edge_x.size(1) == x.size(1) && edge_x.scalar_type() == x.scalar_type(),
                Error, "gine_sum: edge_x must be {} [{}, {}]", c10::toString(x.scalar_type()),
                block.num_edges(), x.size(1));
  check_device(block, x, "gine_sum", "x");
  check_device(block, edge_x, "gine_sum", "edge_x");
  if (uses_generic_ops(block.indptr.device())) return generic::gine_sum(block, x, edge_x);
  return GineSumFn::apply(x, edge_x, block.indptr, block.indices, block.t_indptr, block.t_dst,
                          block.t_eid);
}

}  // namespace partita::nn
