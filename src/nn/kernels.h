#pragma once
// Raw CPU kernels of the fused message passing and dropout (no torch types here: the
// autograd wrappers in message_passing.cc and dropout.cc own the tensors).
//
// Every kernel runs over row ranges of about equal work on torch's intra-op threads and
// writes each output row from exactly one thread, in a fixed order inside the row, so the
// results are bit-identical for any thread count and need no atomics. Feature values are
// float (fp32), bfloat16 (raw bits in uint16_t) or double (for gradient checks); their
// "compute type", used for weights, scores and arithmetic, is double for double and fp32
// otherwise.
#include <cstdint>

namespace partita::nn::kernels {

enum class Dtype { kF32, kBF16, kF64 };

// Compressed rows: row r owns entries [ptr[r], ptr[r+1]); entry k points at row col[k] of
// the gathered matrix and uses the weights of edge eid[k] (eid == nullptr: edge k).
struct Csr {
  int64_t rows = 0;
  const int64_t* ptr = nullptr;
  const int64_t* col = nullptr;
  const int64_t* eid = nullptr;
};

// Weighted gather-sum. x: [*, H * D] (dtype dt), w: [E, H] (compute type) or nullptr (1),
// out: [csr.rows, H * D] (dtype dt), overwritten (rows without entries become 0):
//   out[r, h*D + d] = sum_{k in row r} w[eid(k), h] * x[col[k], h*D + d]
void spmm(const Csr& csr, const void* x, const void* w, int64_t heads, int64_t head_dim, void* out,
          Dtype dt);

// Per-entry, per-head dot products over the head slices (the gradient of spmm's weights):
//   out[eid(k), h] = sum_d a[r, h*D + d] * b[col[k], h*D + d]   for every k in row r
// a: [csr.rows, H * D], b: [*, H * D] (both dtype dt), out: [E, H] (compute type).
void edge_dot(const Csr& csr, const void* a, const void* b, int64_t heads, int64_t head_dim,
              void* out, Dtype dt);

// GAT's edge softmax over the rows of `by_dst` (entries = in-edges of dst r):
//   pre_k = score_src[col[k], h] + score_dst[r, h] (+ score_edge[eid(k), h]),
//   e_k = LeakyReLU_slope(pre_k), alpha[k, h] = exp(e_k - max_row e) / sum_row exp(...)
// score_src [*, H], score_dst [rows, H], score_edge [E, H] or nullptr (no edge term),
// alpha [E, H], all of type dt (kF32 or kF64).
void gat_softmax_forward(const Csr& by_dst, const void* score_src, const void* score_dst,
                         const void* score_edge, int64_t heads, double slope, void* alpha,
                         Dtype dt);

// Gradients of gat_softmax_forward (with the same score_edge) given grad_alpha [E, H]:
// grad_score_dst [rows, H], grad_pre [E, H] (the gradient of pre_k: score_edge's gradient)
// and, through `by_src` (the transposed rows: entries of src j, eid = edge id),
// grad_score_src [by_src.rows, H].
void gat_softmax_backward(const Csr& by_dst, const Csr& by_src, const void* score_src,
                          const void* score_dst, const void* score_edge, const void* alpha,
                          const void* grad_alpha, int64_t heads, double slope, void* grad_pre,
                          void* grad_score_src, void* grad_score_dst, Dtype dt);

// GINE's message sum (gine_sum, message_passing.h) over the rows of `by_dst`:
//   out[r, f] = sum_{k in row r} max(0, x[col[k], f] + e[eid(k), f])
// x [*, F], e [E, F], out [rows, F] (overwritten), all of type dt; sums in the compute type.
void relu_sum(const Csr& by_dst, const void* x, const void* e, int64_t width, void* out, Dtype dt);

// Gradients of relu_sum given grad_out [rows, F]: grad_e [E, F] = grad_out[r] where
// x[col[k]] + e[eid(k)] > 0, else 0; then grad_x [by_src.rows, F] = the sum of grad_e over
// each src's entries of `by_src` (the transposed rows, eid = edge id). All of type dt.
void relu_sum_backward(const Csr& by_dst, const Csr& by_src, const void* x, const void* e,
                       const void* grad_out, int64_t width, void* grad_x, void* grad_e, Dtype dt);

// out[i] = keep(i) ? x[i] * scale : 0, where keep(i) = hash(key, i) >= threshold, a
// counter-based draw (a pure function of key and i, so backward regenerates the same mask).
// threshold = p * 2^32 keeps each element with probability 1 - p. Requires n < 2^32.
void dropout(const void* x, void* out, int64_t n, uint32_t threshold, float scale, uint64_t key,
             Dtype dt);

}  // namespace partita::nn::kernels
