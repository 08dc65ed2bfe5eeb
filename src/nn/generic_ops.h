#pragma once
// Internal to nn/: device-generic implementations of the fused ops, written with plain
// differentiable torch ops (index_select, index_add, scatter_reduce, repeat_interleave,
// sort, bincount), so they run wherever torch runs (CUDA included) and autograd derives
// their backward passes. The public functions (message_passing.h, dropout.h,
// block_tensors.h) call them for tensors that are not on the CPU; CPU tensors keep the
// fused kernels of kernels.h. Unlike those, these materialize one row per edge, and on a
// GPU their sums run in an unspecified order (atomics): results equal the fused kernels'
// within floating-point tolerance, not bit for bit. The one exception is dropout, whose
// mask is the same bit for bit on every device.
//
// Arguments are the public functions' after their checks (shapes, dtypes, devices): every
// tensor, the block's included, is on one device.
#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "partita/nn/block_tensors.h"

namespace partita::nn::generic {

// Whether the public ops take the generic path for tensors on `device`: every device but
// the CPU, and the CPU too while a ForceGeneric is alive.
bool use_generic(const torch::Device& device);

// For tests: while an instance lives (in any thread), the public ops take the generic path
// on CPU tensors too. Nests; not for production code.
class ForceGeneric {
 public:
  ForceGeneric();
  ~ForceGeneric();
  ForceGeneric(const ForceGeneric&) = delete;
  ForceGeneric& operator=(const ForceGeneric&) = delete;
};

// aggregate (message_passing.h): x [num_src, F] (fp32, bf16 accumulated in fp32, or f64),
// edge_weight undefined, [E] or [E, H] in x's compute type.
torch::Tensor aggregate(const BlockTensors& block, const torch::Tensor& x,
                        const torch::Tensor& edge_weight);

// relation_mean (message_passing.h) on a typed block.
torch::Tensor relation_mean(const BlockTensors& block, const torch::Tensor& x);

// gat_edge_softmax (message_passing.h); the per-dst shift is a detached max.
torch::Tensor gat_edge_softmax(const BlockTensors& block, const torch::Tensor& score_src,
                               const torch::Tensor& score_dst, double negative_slope);

// The keep mask of kernels::dropout for n elements (bool [n] on `device`): keep(i) =
// hash(key, i) >= threshold, the same hash as the CPU kernel, bit for bit.
torch::Tensor dropout_keep_mask(int64_t n, uint32_t threshold, uint64_t key,
                                const torch::Device& device);

// counter_dropout (dropout.h) given its threshold and scale (as kernels::dropout):
// x * scale where kept, 0 elsewhere, computed as the CPU kernel does (bf16 through fp32),
// so results equal it bit for bit; differentiable in x.
torch::Tensor counter_dropout(const torch::Tensor& x, uint32_t threshold, float scale,
                              uint64_t key);

// with_self_loops (block_tensors.h) on the block's device: every field equal to the CPU
// version's, the transposed rows included.
BlockTensors with_self_loops(const BlockTensors& block);

// Moves every defined index tensor of `blocks`, and `extra` when defined (replaced by its
// copy), to `device` in one transfer: the fields are packed into one host buffer (pinned
// when the device is CUDA and CUDA is available, then copied non-blocking on the device's
// current stream) and become views of one device buffer. Fields must be on the CPU. A CPU
// `device` still packs (what the tests check).
void move_blocks(std::vector<BlockTensors>& blocks, torch::Tensor* extra,
                 const torch::Device& device);

}  // namespace partita::nn::generic
