#pragma once
// Feature rows as model input (private to train/): stored dtypes as torch types, and the
// row normalization of --normalize-features.
#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <string>

#include "partita/core/npy.h"

namespace partita::train {

// float32, float16 or bfloat16 (the stored feature dtypes) as torch's type.
torch::ScalarType torch_type_of(DType feature_dtype);

// Each row of float32 `x` divided by its sum (all-zero rows stay zero), as in the GCN
// paper's preprocessing. A row whose sum is <= 0 and is not all zeros would be scaled
// without bound or flip its signs: throws Error(describe(row, sum)).
torch::Tensor row_normalized(const torch::Tensor& x,
                             const std::function<std::string(int64_t row, double sum)>& describe);

}  // namespace partita::train
