// Device-generic ops: see generic_ops.h.
#include "generic_ops.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include <atomic>
#include <limits>
#include <tuple>

#include "tensor_types.h"

namespace partita::nn::generic {
namespace {

std::atomic<int> g_forced{0};

// out[row[k], :] = sum over entries k of w[k] * x[col[k], :] (w [K], [K, H] or undefined:
// 1), summed in x's compute type (bf16 through fp32, as the CPU kernels) and returned in
// x's dtype. A row without entries gets zeros.
torch::Tensor gather_sum(const torch::Tensor& x, const torch::Tensor& col, const torch::Tensor& row,
                         const torch::Tensor& w, int64_t rows) {
  const torch::ScalarType type = x.scalar_type();
  const torch::Tensor xs = x.to(compute_type(type));  // no copy unless bf16
  const int64_t entries = col.size(0);
  const int64_t width = x.size(1);
  torch::Tensor msg = xs.index_select(0, col);  // [K, F]
  if (w.defined() && w.dim() == 1) {
    msg = msg * w.unsqueeze(1);
  } else if (w.defined()) {
    const int64_t heads = w.size(1);
    msg = (msg.view({entries, heads, width / heads}) * w.unsqueeze(2)).view({entries, width});
  }
  return torch::zeros({rows, width}, xs.options()).index_add(0, row, msg).to(type);
}

// The low 32 bits of x * c for x, c in [0, 2^32): two 16 x 32-bit halves, so that no
// intermediate leaves int64's range (no signed overflow on any device).
torch::Tensor mul_low32(const torch::Tensor& x, int64_t c) {
  constexpr int64_t kLow16 = 0xffff;
  constexpr int64_t kLow32 = 0xffffffffLL;
  const torch::Tensor high =
      x.bitwise_right_shift(16).mul_(c).bitwise_and_(kLow16).bitwise_left_shift_(16);
  return x.bitwise_and(kLow16).mul_(c).add_(high).bitwise_and_(kLow32);
}

// kernels.cc's mix32 (lowbias32) on int64 values in [0, 2^32). The values stay
// non-negative, so torch's arithmetic right shift is the logical one of uint32_t.
torch::Tensor mix32(torch::Tensor x) {
  x.bitwise_xor_(x.bitwise_right_shift(16));
  x = mul_low32(x, 0x7feb352dLL);
  x.bitwise_xor_(x.bitwise_right_shift(15));
  x = mul_low32(x, 0x846ca68bLL);
  x.bitwise_xor_(x.bitwise_right_shift(16));
  return x;
}

// The BlockTensors of a checked CSC (ptr [num_dst + 1], idx [E]) on their device, every
// field as from_csc in block_tensors.cc builds it on the CPU: the transposed rows list
// each src's edges in increasing edge id (a stable sort by src).
BlockTensors from_csc(int64_t num_dst, int64_t num_src, const torch::Tensor& ptr,
                      const torch::Tensor& idx) {
  const auto opts = ptr.options();
  BlockTensors t;
  t.num_dst = num_dst;
  t.num_src = num_src;
  t.indptr = ptr;
  t.indices = idx;
  t.deg_dst = ptr.slice(0, 1) - ptr.slice(0, 0, num_dst);
  t.edge_dst = torch::arange(num_dst, opts).repeat_interleave(t.deg_dst, 0, idx.size(0));
  t.deg_src = idx.bincount({}, num_src);
  t.t_indptr = torch::cat({torch::zeros({1}, opts), t.deg_src.cumsum(0)});
  const auto sorted = torch::sort(idx, c10::optional<bool>(true), /*dim=*/0);
  t.t_eid = std::get<1>(sorted);
  t.t_dst = t.edge_dst.index_select(0, t.t_eid);
  return t;
}

}  // namespace

bool use_generic(const torch::Device& device) {
  return !device.is_cpu() || g_forced.load(std::memory_order_relaxed) > 0;
}

ForceGeneric::ForceGeneric() { g_forced.fetch_add(1); }
ForceGeneric::~ForceGeneric() { g_forced.fetch_sub(1); }

torch::Tensor aggregate(const BlockTensors& block, const torch::Tensor& x,
                        const torch::Tensor& edge_weight) {
  RECORD_USER_SCOPE("partita::generic_aggregate");
  return gather_sum(x, block.indices, block.edge_dst, edge_weight, block.num_dst);
}

torch::Tensor relation_mean(const BlockTensors& block, const torch::Tensor& x) {
  RECORD_USER_SCOPE("partita::generic_relation_mean");
  // Row s holds entries rel_indptr[s] .. rel_indptr[s + 1] (at least one each), weighing
  // 1 / count each, as the fused path.
  const torch::Tensor count = block.rel_indptr.slice(0, 1) - block.rel_indptr.slice(0, 0, -1);
  const int64_t entries = block.rel_src.size(0);
  const torch::Tensor weight = count.to(compute_type(x.scalar_type()))
                                   .reciprocal()
                                   .repeat_interleave(count, /*dim=*/0, entries);
  const torch::Tensor row =
      torch::arange(count.size(0), count.options()).repeat_interleave(count, /*dim=*/0, entries);
  return gather_sum(x, block.rel_src, row, weight, count.size(0));
}

torch::Tensor gat_edge_softmax(const BlockTensors& block, const torch::Tensor& score_src,
                               const torch::Tensor& score_dst, double negative_slope) {
  RECORD_USER_SCOPE("partita::generic_gat_softmax");
  const torch::ScalarType type = compute_type(score_src.scalar_type());
  const int64_t heads = score_src.size(1);
  const int64_t edges = block.num_edges();
  const torch::Tensor e = torch::leaky_relu(score_src.to(type).index_select(0, block.indices) +
                                                score_dst.to(type).index_select(0, block.edge_dst),
                                            negative_slope);  // [E, H]
  torch::Tensor shift;
  {
    // Any per-(dst, head) constant leaves the softmax unchanged: the max keeps exp <= 1.
    torch::NoGradGuard no_grad;
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

torch::Tensor dropout_keep_mask(int64_t n, uint32_t threshold, uint64_t key,
                                const torch::Device& device) {
  constexpr int64_t kLow32 = 0xffffffffLL;
  const auto k0 = static_cast<int64_t>(static_cast<uint32_t>(key));
  const auto k1 = static_cast<int64_t>(static_cast<uint32_t>(key >> 32));
  // h = mix32(mix32(i ^ k0) + k1), as kernels.cc (i < 2^32).
  torch::Tensor h = torch::arange(n, torch::TensorOptions().dtype(torch::kInt64).device(device));
  h = mix32(h.bitwise_xor_(k0));
  h = mix32(h.add_(k1).bitwise_and_(kLow32));
  return h.ge(static_cast<int64_t>(threshold));
}

torch::Tensor counter_dropout(const torch::Tensor& x, uint32_t threshold, float scale,
                              uint64_t key) {
  RECORD_USER_SCOPE("partita::generic_dropout");
  const torch::Tensor drop =
      dropout_keep_mask(x.numel(), threshold, key, x.device()).logical_not_().view(x.sizes());
  // The CPU kernel: the value in the compute type times the float scale, rounded once to
  // x's type; 0 where dropped. Autograd's backward applies the same mask and scale.
  const torch::ScalarType type = x.scalar_type();
  return (x.to(compute_type(type)) * static_cast<double>(scale)).masked_fill(drop, 0).to(type);
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

void move_blocks(std::vector<BlockTensors>& blocks, torch::Tensor* extra,
                 const torch::Device& device) {
  std::vector<torch::Tensor*> fields;
  for (BlockTensors& t : blocks) {
    for (torch::Tensor* f :
         {&t.indptr, &t.indices, &t.edge_dst, &t.deg_dst, &t.deg_src, &t.t_indptr, &t.t_dst,
          &t.t_eid, &t.graph_deg, &t.etypes, &t.rel_offsets, &t.rel_row_dst, &t.rel_indptr,
          &t.rel_src, &t.t_rel_row, &t.t_rel_entry})
      if (f->defined()) fields.push_back(f);
  }
  if (extra != nullptr && extra->defined()) fields.push_back(extra);
  int64_t total = 0;
  for (const torch::Tensor* f : fields) total += f->numel();
  // Pinned host memory lets the copy run asynchronously (CUDA's host allocator keeps the
  // buffer until the copy is done, although `host` goes out of scope here).
  const bool pin = device.is_cuda() && torch::cuda::is_available();
  const torch::Tensor host =
      torch::empty({total}, torch::TensorOptions().dtype(torch::kInt64).pinned_memory(pin));
  int64_t offset = 0;
  for (const torch::Tensor* f : fields) {
    host.narrow(0, offset, f->numel()).copy_(f->reshape({-1}));
    offset += f->numel();
  }
  const torch::Tensor moved = host.to(device, /*non_blocking=*/pin);
  offset = 0;
  for (torch::Tensor* f : fields) {
    const int64_t n = f->numel();
    *f = moved.narrow(0, offset, n).view(f->sizes());
    offset += n;
  }
}

}  // namespace partita::nn::generic
