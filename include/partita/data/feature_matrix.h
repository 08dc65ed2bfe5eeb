#pragma once
// Feature rows in memory or mapped from a .npy file (data/ layer).
#include <cstdint>
#include <optional>
#include <vector>

#include "partita/core/npy.h"

namespace partita::data {

// Row-major float32 [rows, cols] features, either owned or mapped from a .npy file.
// Move-only; data() stays valid across moves (the owned buffer or mapping moves along).
class FeatureMatrix {
 public:
  FeatureMatrix() = default;
  static FeatureMatrix owned(std::vector<float> values, int64_t rows, int64_t cols);
  static FeatureMatrix mapped(NpyArray array);  // array must be float32 [rows, cols]

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  const float* row(int64_t r) const { return data_ + r * cols_; }
  const float* data() const { return data_; }
  // For mapped features: lets the kernel drop pages of rows [begin, end) after a pass.
  void release_rows(int64_t begin, int64_t end) const;

 private:
  std::vector<float> owned_;
  std::optional<NpyArray> mapped_;
  const float* data_ = nullptr;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
};

}  // namespace partita::data
