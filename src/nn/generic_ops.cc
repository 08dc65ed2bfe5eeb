// Device-generic ops: see generic_ops.h.
#include "generic_ops.h"

#include <ATen/Context.h>
#include <c10/util/Exception.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <limits>
#include <string>
#include <tuple>

#include "tensor_types.h"

namespace partita::nn::generic {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Drops torch's warnings on this thread while alive: torch warns, once per process, that
// sparse CSR support and scatter_reduce are "in beta", on stderr, between a run's own lines. (The
// handler is per thread in both torch versions; its interface changed in torch 2.)
class QuietWarnings final : public c10::WarningHandler {
 public:
#if TORCH_VERSION_MAJOR >= 2
  QuietWarnings() : previous_(c10::WarningUtils::get_warning_handler()) {
    c10::WarningUtils::set_warning_handler(this);
  }
  ~QuietWarnings() override { c10::WarningUtils::set_warning_handler(previous_); }
  void process(const c10::Warning& /*warning*/) override {}
#else
  QuietWarnings() : previous_(c10::Warning::get_warning_handler()) {
    c10::Warning::set_warning_handler(this);
  }
  ~QuietWarnings() override { c10::Warning::set_warning_handler(previous_); }
  void process(const c10::SourceLocation& /*where*/, const std::string& /*msg*/,
               bool /*verbatim*/) override {}
#endif

 private:
  c10::WarningHandler* previous_;
};

// The sparse CSR matrix [rows, cols] whose row r holds entries ptr[r] .. ptr[r + 1] at columns
// `col` with `values`. Unchecked (no host read): the blocks' index arrays are checked when
// they are built. Columns may repeat or be unordered inside a row; the product sums them.
torch::Tensor csr(const torch::Tensor& ptr, const torch::Tensor& col, const torch::Tensor& values,
                  int64_t rows, int64_t cols) {
  QuietWarnings quiet;
  return at::_sparse_csr_tensor_unsafe(ptr, col, values, {rows, cols},
                                       values.options().layout(torch::kSparseCsr));
}

// out[r, h*D + d] = sum over the entries k of row r of w[k, h] * x[col[k], h*D + d], as one
// sparse matrix product. x: [cols, H*D], contiguous, in the compute type; w: [K] (H = 1) or
// [K, H], aligned with the entries. With H > 1 the product runs over the matrix whose row
// (r, h) holds row r's entries with head h's weights at columns col * H + h, against x viewed
// as [cols * H, D]: one product for all heads.
torch::Tensor spmm(const torch::Tensor& ptr, const torch::Tensor& col, const torch::Tensor& w,
                   int64_t rows, const torch::Tensor& x) {
  const int64_t cols = x.size(0);
  if (w.dim() == 1) return csr(ptr, col, w, rows, cols).mm(x);
  const int64_t heads = w.size(1);
  const int64_t entries = col.size(0);
  const int64_t dim = x.size(1) / heads;
  const auto opts = ptr.options();
  const torch::Tensor start = ptr.slice(0, 0, rows);
  const torch::Tensor deg = ptr.slice(0, 1) - start;
  const torch::Tensor head = torch::arange(heads, opts);
  const torch::Tensor row = torch::arange(rows, opts).repeat_interleave(deg, 0, entries);
  // Entry k of row r, under head h, moves to H*ptr[r] + h*deg[r] + (k - ptr[r]).
  const torch::Tensor moved =
      ((torch::arange(entries, opts) + start.index_select(0, row) * (heads - 1)).unsqueeze(1) +
       deg.index_select(0, row).unsqueeze(1) * head)
          .view(-1);  // (k, h), k-major: w's order
  const torch::Tensor head_col =
      torch::empty({entries * heads}, opts)
          .index_copy_(0, moved, (col.unsqueeze(1) * heads + head).view(-1));
  const torch::Tensor head_w =
      torch::empty({entries * heads}, w.options()).index_copy_(0, moved, w.reshape(-1));
  const torch::Tensor head_ptr =
      torch::cat({((start * heads).unsqueeze(1) + deg.unsqueeze(1) * head).view(-1),
                  ptr.slice(0, rows) * heads});
  return csr(head_ptr, head_col, head_w, rows * heads, cols * heads)
      .mm(x.view({cols * heads, dim}))
      .view({rows, heads * dim});
}

// The weighted gather-sum of kernels::spmm over compressed rows (ptr, col; entries weighted by
// `weight` in entry order) and, for backward, their transpose (t_ptr, t_col; entry k is entry
// t_eid[k] of the rows). Index tensors are inputs (never differentiable) so that backward
// finds them; unweighted (`weighted` false), `weight_in` is a defined placeholder (torch
// 1.13's Function::apply cannot take an undefined input once another one requires grad).
struct CsrSumFn : torch::autograd::Function<CsrSumFn> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight_in, bool weighted,
                               const torch::Tensor& ptr, const torch::Tensor& col,
                               const torch::Tensor& t_ptr, const torch::Tensor& t_col,
                               const torch::Tensor& t_eid) {
    RECORD_USER_SCOPE("partita::generic_spmm_forward");
    const torch::ScalarType type = x.scalar_type();
    const torch::ScalarType compute = compute_type(type);
    const torch::Tensor xc = (type == compute ? x : x.to(compute)).contiguous();
    const torch::Tensor w =
        weighted ? weight_in.contiguous() : torch::ones({col.size(0)}, xc.options());
    const bool w_grad = weighted && weight_in.requires_grad();
    ctx->saved_data["dtype"] = static_cast<int64_t>(type);
    ctx->saved_data["x_grad"] = x.requires_grad();
    ctx->saved_data["w_grad"] = w_grad;
    // x is kept only for the weights' gradient.
    ctx->save_for_backward({w_grad ? xc : torch::Tensor(), w, ptr, col, t_ptr, t_col, t_eid});
    const torch::Tensor out = spmm(ptr, col, w, ptr.size(0) - 1, xc);
    return type == compute ? out : out.to(type);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    RECORD_USER_SCOPE("partita::generic_spmm_backward");
    const auto s = ctx->get_saved_variables();
    const torch::Tensor &xc = s[0], &w = s[1], &ptr = s[2], &col = s[3];
    const auto type = static_cast<torch::ScalarType>(ctx->saved_data["dtype"].toInt());
    const torch::ScalarType compute = compute_type(type);
    const torch::Tensor g =
        (grads[0].scalar_type() == compute ? grads[0] : grads[0].to(compute)).contiguous();
    torch::Tensor grad_x, grad_w;
    if (ctx->saved_data["x_grad"].toBool()) {
      // Through the transposed rows: src j gathers the gradients of its edges' dst rows.
      grad_x = spmm(s[4], s[5], w.index_select(0, s[6]), s[4].size(0) - 1, g);
      if (type != compute) grad_x = grad_x.to(type);
    }
    if (ctx->saved_data["w_grad"].toBool()) {
      // Per entry and head, the dot product of its row's gradient and its column's x: the
      // one place a row per entry exists (kernels::edge_dot on the CPU).
      const int64_t rows = ptr.size(0) - 1;
      const int64_t entries = col.size(0);
      const int64_t heads = w.dim() == 2 ? w.size(1) : 1;
      const torch::Tensor row =
          torch::arange(rows, ptr.options())
              .repeat_interleave(ptr.slice(0, 1) - ptr.slice(0, 0, rows), 0, entries);
      grad_w = (g.index_select(0, row) * xc.index_select(0, col))
                   .view({entries, heads, g.size(1) / heads})
                   .sum(2)
                   .view(w.sizes());
    }
    return {grad_x, grad_w, {}, {}, {}, {}, {}, {}};
  }
};

}  // namespace

torch::Tensor aggregate(const BlockTensors& block, const torch::Tensor& x,
                        const torch::Tensor& edge_weight) {
  RECORD_USER_SCOPE("partita::generic_aggregate");
  const bool weighted = edge_weight.defined();
  const torch::Tensor w =
      weighted ? edge_weight : torch::empty({0}, x.options().dtype(compute_type(x.scalar_type())));
  return CsrSumFn::apply(x, w, weighted, block.indptr, block.indices, block.t_indptr, block.t_dst,
                         block.t_eid);
}

torch::Tensor relation_mean(const BlockTensors& block, const torch::Tensor& x) {
  RECORD_USER_SCOPE("partita::generic_relation_mean");
  // Row s holds entries rel_indptr[s] .. rel_indptr[s + 1] (at least one each), weighing
  // 1 / count each, as the fused path; backward through (t_indptr, t_rel_row, t_rel_entry).
  const torch::Tensor count = block.rel_indptr.slice(0, 1) - block.rel_indptr.slice(0, 0, -1);
  const torch::Tensor weight = count.to(compute_type(x.scalar_type()))
                                   .reciprocal()
                                   .repeat_interleave(count, /*dim=*/0, block.rel_src.size(0));
  return CsrSumFn::apply(x, weight, /*weighted=*/true, block.rel_indptr, block.rel_src,
                         block.t_indptr, block.t_rel_row, block.t_rel_entry);
}

torch::Tensor gat_edge_softmax(const BlockTensors& block, const torch::Tensor& score_src,
                               const torch::Tensor& score_dst, double negative_slope,
                               const torch::Tensor& score_edge) {
  RECORD_USER_SCOPE("partita::generic_gat_softmax");
  const torch::ScalarType type = compute_type(score_src.scalar_type());
  const int64_t heads = score_src.size(1);
  const int64_t edges = block.num_edges();
  // One score per edge and head ([E, H]: the softmax's own output has that size).
  torch::Tensor pre = score_src.to(type).index_select(0, block.indices) +
                      score_dst.to(type).index_select(0, block.edge_dst);
  if (score_edge.defined()) pre = pre + score_edge.to(type);
  const torch::Tensor e = torch::leaky_relu(pre, negative_slope);
  torch::Tensor shift;
  {
    // Any per-(dst, head) constant leaves the softmax unchanged: the max keeps exp <= 1.
    torch::NoGradGuard no_grad;
    QuietWarnings quiet;  // torch warns once that scatter_reduce is "in beta"
    const torch::Tensor index = block.edge_dst.unsqueeze(1).expand({edges, heads});
    shift =
        torch::full({block.num_dst, heads}, -std::numeric_limits<double>::infinity(), e.options())
            .scatter_reduce(0, index, e, "amax", /*include_self=*/true)
            .index_select(0, block.edge_dst);
  }
  const torch::Tensor ex = (e - shift).exp();
  const torch::Tensor sum =
      torch::zeros({block.num_dst, heads}, ex.options()).index_add(0, block.edge_dst, ex);
  return ex / sum.index_select(0, block.edge_dst);
}

torch::Tensor gine_sum(const BlockTensors& block, const torch::Tensor& x,
                       const torch::Tensor& edge_x) {
  RECORD_USER_SCOPE("partita::generic_gine_sum");
  const torch::ScalarType type = compute_type(x.scalar_type());
  const torch::Tensor m =
      torch::relu(x.to(type).index_select(0, block.indices) + edge_x.to(type));  // [E, F]
  return torch::zeros({block.num_dst, x.size(1)}, m.options())
      .index_add(0, block.edge_dst, m)
      .to(x.scalar_type());
}

torch::Tensor dropout(const torch::Tensor& x, double p, uint64_t key) {
  RECORD_USER_SCOPE("partita::generic_dropout");
  const torch::ScalarType type = x.scalar_type();
  const torch::ScalarType compute = compute_type(type);
  // A generator of x's device of this call's own, seeded with the key: the mask is a function
  // of (key, shape, device), and nothing else draws from it.
  at::Generator generator = at::globalContext().defaultGenerator(x.device()).clone();
  generator.set_current_seed(key);
  // 0 or 1, then the value (in the compute type) times the mask, times the CPU kernel's float
  // scale: rounded once, as the kernel's value * scale (x * 1 and x * 0 are exact). Autograd's
  // backward applies the same mask and scale.
  const torch::Tensor keep =
      torch::empty(x.sizes(), x.options().dtype(compute)).bernoulli_(1.0 - p, generator);
  const torch::Tensor out = (type == compute ? x : x.to(compute))
                                .mul(keep)
                                .mul_(static_cast<double>(static_cast<float>(1.0 / (1.0 - p))));
  return type == compute ? out : out.to(type);
}

BlockTensors from_csc(int64_t num_dst, int64_t num_src, const torch::Tensor& ptr,
                      const torch::Tensor& idx) {
  const auto opts = ptr.options();
  const int64_t edges = idx.size(0);
  BlockTensors t;
  t.num_dst = num_dst;
  t.num_src = num_src;
  t.indptr = ptr;
  t.indices = idx;
  t.deg_dst = ptr.diff();
  t.edge_dst = torch::arange(num_dst, opts).repeat_interleave(t.deg_dst, 0, edges);
  // The transposed rows: a stable sort of the edges by src keeps the edge ids increasing in
  // each src row; each src's first entry is found by binary search (not by bincount, which
  // reads its input's maximum on the host).
  const auto sorted = torch::sort(idx, c10::optional<bool>(true), /*dim=*/0);
  t.t_eid = std::get<1>(sorted);
  t.t_indptr = torch::searchsorted(std::get<0>(sorted), torch::arange(num_src + 1, opts));
  t.deg_src = t.t_indptr.diff();
  t.t_dst = t.edge_dst.index_select(0, t.t_eid);
  return t;
}

BlockTensors with_self_loops(const BlockTensors& block) {
  RECORD_USER_SCOPE("partita::generic_self_loops");
  const int64_t n = block.num_dst;
  const int64_t edges = block.num_edges();
  const auto opts = block.indptr.options();
  // Row i grows by one entry in front (src i), so it starts i entries later and edge k
  // (of dst edge_dst[k]) moves to k + edge_dst[k] + 1.
  const torch::Tensor ptr = block.indptr + torch::arange(n + 1, opts);
  torch::Tensor idx = torch::empty({edges + n}, opts);
  idx.index_copy_(0, ptr.slice(0, 0, n), torch::arange(n, opts));
  idx.index_copy_(0, torch::arange(edges, opts) + block.edge_dst + 1, block.indices);
  BlockTensors t = from_csc(n, block.num_src, ptr, idx);
  t.graph_deg = block.graph_deg;
  return t;
}

}  // namespace partita::nn::generic
