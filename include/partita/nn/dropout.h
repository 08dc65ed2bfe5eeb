#pragma once
// Dropout with counter-based masks: element i of a call with key k is kept iff
// hash(k, i) >= p * 2^32, so the mask is a pure function of (key, i). On the CPU nothing
// is stored for backward (it regenerates the mask), the result does not depend on the
// thread count, and a run that sets the same keys repeats the same masks (see
// GnnModel::set_dropout_key).
// The mask is the same on every device: a fused kernel on the CPU, torch's integer ops
// elsewhere (results bit-identical to the CPU's).
#include <torch/types.h>

#include <cstdint>

namespace partita::nn {

// x * mask / (1 - p), differentiable in x, on x's device. x: float32, bfloat16 or float64,
// fewer than 2^32 elements; p in [0, 1) (p == 0 returns x). Throws partita::Error otherwise.
torch::Tensor counter_dropout(const torch::Tensor& x, double p, uint64_t key);

}  // namespace partita::nn
