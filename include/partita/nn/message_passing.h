#pragma once
// Fused message passing on a block. On the CPU these are autograd functions over the
// kernels of src/nn/kernels.h: no tensor with one feature row per edge is ever
// materialized, the backward passes scatter through the transposed block
// (BlockTensors::t_*) without atomics, and results are bit-identical for any number of
// torch threads. On any other device (a block from to_block_tensors(..., device)) the same
// functions run as plain torch ops (index_select, index_add, ...), with gradients from
// autograd: equal to the CPU kernels within floating-point tolerance (a GPU sums in an
// unspecified order), one feature row per edge materialized.
//
// Feature tensors may be float32 or bfloat16 (accumulation in fp32; weights and scores are
// float32), or float64 (weights and scores float64; for gradient checks). Every tensor
// must be on the block's device.
#include <torch/types.h>

#include "partita/nn/block_tensors.h"

namespace partita::nn {

// Weighted sum over each dst's in-edges:
//   out[i, :] = sum_{edges e = (j -> i)} w_e * x[j, :]
// x: [num_src, F]; edge_weight (float64 for float64 x, else float32): undefined (all 1),
// [E], or [E, H] with F % H == 0, where
// head h's weights apply to columns [h F/H, (h+1) F/H). Returns [num_dst, F] in x's dtype;
// a dst without in-edges gets zeros. Gradients flow to x and, when it requires grad, to
// edge_weight. Throws partita::Error on shape, dtype or device mismatches.
torch::Tensor aggregate(const BlockTensors& block, const torch::Tensor& x,
                        const torch::Tensor& edge_weight = {});

// The mean over each dst's in-edges (0 without in-edges): aggregate with w_e = 1 / deg(i).
torch::Tensor aggregate_mean(const BlockTensors& block, const torch::Tensor& x);

// R-GCN's per-relation means over a typed block, one row per relation row s = (dst i,
// relation r) of the block (BlockTensors::rel_*; pairs without edges have no row):
//   out[s, :] = mean over i's in-edges of relation r of x[j, :]
// x: [num_src, F]; returns [block.num_relation_rows(), F] in x's dtype, differentiable in x.
// On the CPU one fused pass over the relation rows; backward through the transposed block
// (t_rel_*), without atomics. Throws partita::Error on an untyped block or a shape, dtype
// or device mismatch.
torch::Tensor relation_mean(const BlockTensors& block, const torch::Tensor& x);

// GAT's attention: per dst i and head h, over i's in-edges e = (j -> i),
//   alpha[e, h] = softmax_e LeakyReLU_slope(score_src[j, h] + score_dst[i, h] (+ score_edge[e, h]))
// score_src [num_src, H], score_dst [num_dst, H], score_edge [E, H] or undefined (no edge
// term; GAT with edge features passes a_edge . W_e e_ij); returns alpha [E, H], float64 for
// float64 scores and float32 otherwise (rows sum to 1 per dst and head; nothing for a dst
// without in-edges). Differentiable in every score.
torch::Tensor gat_edge_softmax(const BlockTensors& block, const torch::Tensor& score_src,
                               const torch::Tensor& score_dst, double negative_slope = 0.2,
                               const torch::Tensor& score_edge = {});

// GINE's messages (Hu et al. 2020), summed over each dst's in-edges e = (j -> i):
//   out[i, :] = sum_e ReLU(x[j, :] + edge_x[e, :])
// x [num_src, F] and edge_x [E, F] of one dtype (float32, bfloat16 summed in fp32, or
// float64); returns [num_dst, F] in that dtype, zeros for a dst without in-edges.
// Differentiable in both. On the CPU a fused pass (no [E, F] message tensor; backward
// writes edge_x's [E, F] gradient, then gathers x's through the transposed block). Throws
// partita::Error on shape, dtype or device mismatches.
torch::Tensor gine_sum(const BlockTensors& block, const torch::Tensor& x,
                       const torch::Tensor& edge_x);

}  // namespace partita::nn
