#pragma once
// Internal to nn/: device-generic implementations of the fused ops, written with torch ops
// that exist on every device in torch 1.13 and 2.x, so they run wherever torch runs (CUDA
// included). The public functions (message_passing.h, dropout.h, block_tensors.h) call them
// where nn::uses_generic_ops (kernel_path.h) says so: on every device but the CPU, and on
// the CPU under KernelPathScope(kGeneric).
//
// What they do not do, by design, so that a GPU step is a short stream of kernels the host
// enqueues without waiting:
// - materialize a feature row per edge: a weighted gather-sum (aggregate, relation_mean,
//   GAT's weighted sum) is one sparse-CSR matrix product over the block's rows forward, and
//   one over its transposed rows (BlockTensors::t_*) backward; only the gradient of edge
//   weights (GAT's attention) needs per-edge dot products;
// - read device data on the host: no .item(), nonzero, unique, bincount (which reads its
//   maximum) or repeat_interleave without its output size.
// Results equal the fused kernels' within floating-point tolerance, not bit for bit (sums
// run in another order; on a GPU in an unspecified one). Dropout draws its mask from
// torch's generator of the tensor's device, seeded with the call's key: the same key, shape
// and device give the same mask (so a rerun or a resumed run repeats it), but it is not the
// fused kernel's counter-based mask: equal in distribution only.
//
// Arguments are the public functions' after their checks (shapes, dtypes, devices): every
// tensor, the block's included, is on one device.
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "partita/nn/block_tensors.h"

namespace partita::nn::generic {

// aggregate (message_passing.h): x [num_src, F] (fp32, bf16 summed in fp32, or f64),
// edge_weight undefined, [E] or [E, H] in x's compute type.
torch::Tensor aggregate(const BlockTensors& block, const torch::Tensor& x,
                        const torch::Tensor& edge_weight);

// relation_mean (message_passing.h) on a typed block.
torch::Tensor relation_mean(const BlockTensors& block, const torch::Tensor& x);

// gat_edge_softmax (message_passing.h); the per-dst shift is a detached max. score_edge
// undefined: no edge term.
torch::Tensor gat_edge_softmax(const BlockTensors& block, const torch::Tensor& score_src,
                               const torch::Tensor& score_dst, double negative_slope,
                               const torch::Tensor& score_edge);

// gine_sum (message_passing.h): the messages as one [E, F] tensor, summed with index_add
// in x's compute type.
torch::Tensor gine_sum(const BlockTensors& block, const torch::Tensor& x,
                       const torch::Tensor& edge_x);

// counter_dropout (dropout.h) for p in (0, 1): x * scale where kept, 0 elsewhere, computed
// in x's compute type and rounded once to x's type (as the CPU kernel); kept with
// probability 1 - p by torch's generator of x's device seeded with `key`. Differentiable in
// x (backward applies the same mask).
torch::Tensor dropout(const torch::Tensor& x, double p, uint64_t key);

// with_self_loops (block_tensors.h) on the block's device: every field equal to the CPU
// version's, the transposed rows included.
BlockTensors with_self_loops(const BlockTensors& block);

// The BlockTensors of a checked CSC (ptr [num_dst + 1], idx [E], int64 on one device),
// every field derived on that device and equal to what to_block_tensors builds on the CPU
// (the transposed rows list each src's edges in increasing edge id).
BlockTensors from_csc(int64_t num_dst, int64_t num_src, const torch::Tensor& ptr,
                      const torch::Tensor& idx);

}  // namespace partita::nn::generic
