// Feature rows as model input: see feature_tensors.h.
#include "feature_tensors.h"

#include "partita/core/error.h"

namespace partita::train {

torch::ScalarType torch_type_of(DType feature_dtype) {
  switch (feature_dtype) {
    case DType::kFloat16:
      return torch::kHalf;
    case DType::kBFloat16:
      return torch::kBFloat16;
    default:
      return torch::kFloat32;
  }
}

torch::Tensor row_normalized(const torch::Tensor& x,
                             const std::function<std::string(int64_t row, double sum)>& describe) {
  const torch::Tensor sums = x.sum(1, /*keepdim=*/true);
  const torch::Tensor bad = sums.le(0).logical_and(x.abs().sum(1, true).gt(0)).reshape(-1);
  if (bad.any().item<bool>()) {
    const int64_t row = bad.nonzero()[0][0].item<int64_t>();
    throw Error(describe(row, sums[row][0].item<double>()));
  }
  return x / sums.clamp_min(1e-12);
}

}  // namespace partita::train
