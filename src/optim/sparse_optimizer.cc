#include "partita/optim/sparse_optimizer.h"

#include <cmath>
#include <utility>

#include "partita/core/error.h"

namespace partita::optim {
namespace {

class Sgd final : public RowOptimizer {
 public:
  using RowOptimizer::RowOptimizer;
  SparseOptimizer kind() const override { return SparseOptimizer::kSgd; }
  void step(float* table, ArrayView<const int64_t> rows, const float* grads) override {
    const float lr = options_.lr;
    for (int64_t k = 0; k < rows.size(); ++k) {
      float* x = table + rows[k] * dim_;
      const float* g = grads + k * dim_;
      for (int64_t j = 0; j < dim_; ++j) x[j] -= lr * g[j];
    }
  }
};

class Adagrad final : public RowOptimizer {
 public:
  using RowOptimizer::RowOptimizer;
  SparseOptimizer kind() const override { return SparseOptimizer::kAdagrad; }
  void step(float* table, ArrayView<const int64_t> rows, const float* grads) override {
    const SparseOptimizerOptions& opt = options_;
    for (int64_t k = 0; k < rows.size(); ++k) {
      float* x = table + rows[k] * dim_;
      float* s = state_.first.data() + rows[k] * dim_;
      const float* g = grads + k * dim_;
      for (int64_t j = 0; j < dim_; ++j) {
        s[j] += g[j] * g[j];
        x[j] -= opt.lr * g[j] / (std::sqrt(s[j]) + opt.eps);
      }
    }
  }
};

class Adam final : public RowOptimizer {
 public:
  using RowOptimizer::RowOptimizer;
  SparseOptimizer kind() const override { return SparseOptimizer::kAdam; }
  void step(float* table, ArrayView<const int64_t> rows, const float* grads) override {
    const SparseOptimizerOptions& opt = options_;
    for (int64_t k = 0; k < rows.size(); ++k) {
      const int64_t row = rows[k];
      float* x = table + row * dim_;
      float* m = state_.first.data() + row * dim_;
      float* v = state_.second.data() + row * dim_;
      const float* g = grads + k * dim_;
      const int64_t t = ++state_.steps[static_cast<size_t>(row)];
      const float c1 = static_cast<float>(1 - std::pow(static_cast<double>(opt.beta1), t));
      const float c2 = static_cast<float>(1 - std::pow(static_cast<double>(opt.beta2), t));
      for (int64_t j = 0; j < dim_; ++j) {
        m[j] = opt.beta1 * m[j] + (1 - opt.beta1) * g[j];
        v[j] = opt.beta2 * v[j] + (1 - opt.beta2) * g[j] * g[j];
        x[j] -= opt.lr * (m[j] / c1) / (std::sqrt(v[j] / c2) + opt.eps);
      }
    }
  }
};

}  // namespace

const NameTable<SparseOptimizer>& sparse_optimizer_names() {
  static const NameTable<SparseOptimizer> names{{"sgd", SparseOptimizer::kSgd},
                                                {"adagrad", SparseOptimizer::kAdagrad},
                                                {"adam", SparseOptimizer::kAdam}};
  return names;
}

const char* sparse_optimizer_name(SparseOptimizer kind) {
  for (const auto& [name, value] : sparse_optimizer_names())
    if (value == kind) return name.c_str();
  return "unknown";
}

SparseOptimizerState empty_state(SparseOptimizer kind, int64_t rows, int64_t dim) {
  SparseOptimizerState state;
  const size_t values = static_cast<size_t>(rows * dim);
  if (kind != SparseOptimizer::kSgd) state.first.assign(values, 0.0f);
  if (kind == SparseOptimizer::kAdam) {
    state.second.assign(values, 0.0f);
    state.steps.assign(static_cast<size_t>(rows), 0);
  }
  return state;
}

RowOptimizer::RowOptimizer(const SparseOptimizerOptions& options, int64_t rows, int64_t dim)
    : options_(options), rows_(rows), dim_(dim), state_(empty_state(options.kind, rows, dim)) {}

void RowOptimizer::set_state(SparseOptimizerState state) {
  const SparseOptimizerState want = empty_state(kind(), rows_, dim_);
  PARTITA_CHECK(state.first.size() == want.first.size() &&
                    state.second.size() == want.second.size() &&
                    state.steps.size() == want.steps.size(),
                Error, "internal: {} state of {} + {} + {} values for {} rows of {}",
                sparse_optimizer_name(kind()), state.first.size(), state.second.size(),
                state.steps.size(), rows_, dim_);
  state_ = std::move(state);
}

std::unique_ptr<RowOptimizer> make_row_optimizer(const SparseOptimizerOptions& options,
                                                 int64_t rows, int64_t dim) {
  switch (options.kind) {
    case SparseOptimizer::kSgd:
      return std::unique_ptr<RowOptimizer>(new Sgd(options, rows, dim));
    case SparseOptimizer::kAdagrad:
      return std::unique_ptr<RowOptimizer>(new Adagrad(options, rows, dim));
    case SparseOptimizer::kAdam:
      return std::unique_ptr<RowOptimizer>(new Adam(options, rows, dim));
  }
  throw Error(fmt::format("internal: sparse optimizer {}", static_cast<uint32_t>(options.kind)));
}

}  // namespace partita::optim
