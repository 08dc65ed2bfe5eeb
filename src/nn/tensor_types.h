#pragma once
// Internal to nn/: how tensors map onto the kernels' value types (kernels.h).
#include <torch/types.h>

#include "kernels.h"
#include "partita/core/error.h"

namespace partita::nn {

// The kernels' value type of `x`. Throws partita::Error naming `what` for other types.
inline kernels::Dtype kernel_dtype(const torch::Tensor& x, const char* what) {
  if (x.scalar_type() == torch::kFloat32) return kernels::Dtype::kF32;
  if (x.scalar_type() == torch::kBFloat16) return kernels::Dtype::kBF16;
  if (x.scalar_type() == torch::kFloat64) return kernels::Dtype::kF64;
  throw Error(fmt::format("{}: features must be float32, bfloat16 or float64, got {}", what,
                          c10::toString(x.scalar_type())));
}

// The type of weights and scores for features of type `x`: float64 for float64, else float32.
inline torch::ScalarType compute_type(torch::ScalarType x) {
  return x == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
}

}  // namespace partita::nn
