#pragma once
// Dropout whose mask is a function of the call's key. On the CPU (fused kernel) it is
// counter-based: element i of a call with key k is kept iff hash(k, i) >= p * 2^32, so the
// mask is a pure function of (key, i), nothing is stored for backward (it regenerates the
// mask), and the result does not depend on the thread count. On a GPU (and on the CPU under
// nn::KernelPathScope(kGeneric), kernel_path.h) the mask is drawn by torch's generator of
// the device, a private copy seeded with the key: a function of (key, shape, device), kept
// for backward, equal in distribution to the CPU's but not the same bits. Either way a run
// that sets the same keys repeats the same masks (see GnnModel::set_dropout_key), resumed
// runs included.
#include <torch/types.h>

#include <cstdint>

namespace partita::nn {

// x * mask / (1 - p), differentiable in x, on x's device. x: float32, bfloat16 or float64,
// fewer than 2^32 elements; p in [0, 1) (p == 0 returns x). Throws partita::Error otherwise.
torch::Tensor counter_dropout(const torch::Tensor& x, double p, uint64_t key);

}  // namespace partita::nn
