// Sparse optimizers (optim/sparse_optimizer.h): each rule against its formula written out,
// only the listed rows change, Adam's step count is per row, and state sizes are checked.
#include "partita/optim/sparse_optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "partita/core/error.h"

namespace partita::optim {
namespace {

SparseOptimizerOptions options_of(SparseOptimizer kind) {
  SparseOptimizerOptions o;
  o.kind = kind;
  o.lr = 0.1f;
  return o;
}

TEST(SparseOptimizer, RulesFollowTheirFormulasOnTheListedRowsOnly) {
  const std::vector<int64_t> rows = {2, 0};
  const std::vector<float> grads = {1.0f, -2.0f, 0.5f, 4.0f};  // row 2, then row 0
  for (SparseOptimizer kind :
       {SparseOptimizer::kSgd, SparseOptimizer::kAdagrad, SparseOptimizer::kAdam}) {
    const SparseOptimizerOptions o = options_of(kind);
    auto opt = make_row_optimizer(o, 3, 2);
    EXPECT_EQ(opt->kind(), kind);
    std::vector<float> table = {1, 2, 3, 4, 5, 6};
    std::vector<float> want = table;
    for (int step = 0; step < 2; ++step) {
      opt->step(table.data(), ArrayView<const int64_t>(rows.data(), 2), grads.data());
      for (size_t k = 0; k < rows.size(); ++k) {
        for (int j = 0; j < 2; ++j) {
          const float g = grads[k * 2 + static_cast<size_t>(j)];
          float& x = want[static_cast<size_t>(rows[k] * 2 + j)];
          if (kind == SparseOptimizer::kSgd) {
            x -= o.lr * g;
          } else if (kind == SparseOptimizer::kAdagrad) {
            const float s = static_cast<float>(step + 1) * g * g;
            x -= o.lr * g / (std::sqrt(s) + o.eps);
          } else {
            // A constant gradient: m / (1 - b1^t) = g and v / (1 - b2^t) = g^2 exactly in
            // reals; floats stay within a few ulps.
            x -= o.lr * g / (std::fabs(g) + o.eps);
          }
        }
      }
      for (size_t i = 0; i < table.size(); ++i) EXPECT_NEAR(table[i], want[i], 1e-5) << i;
    }
    EXPECT_EQ(table[2], 3.0f);  // row 1 had no gradient
    EXPECT_EQ(table[3], 4.0f);
    if (kind == SparseOptimizer::kAdam) {
      EXPECT_EQ(opt->state().steps, (std::vector<int64_t>{2, 0, 2}));
    }
  }
}

TEST(SparseOptimizer, StateHasTheSizesOfItsKindAndIsChecked) {
  EXPECT_TRUE(empty_state(SparseOptimizer::kSgd, 3, 2).first.empty());
  EXPECT_EQ(empty_state(SparseOptimizer::kAdagrad, 3, 2).first.size(), 6u);
  EXPECT_EQ(empty_state(SparseOptimizer::kAdam, 3, 2).steps.size(), 3u);
  auto opt = make_row_optimizer(options_of(SparseOptimizer::kAdam), 3, 2);
  EXPECT_THROW(opt->set_state(empty_state(SparseOptimizer::kAdagrad, 3, 2)), Error);
  SparseOptimizerState state = empty_state(SparseOptimizer::kAdam, 3, 2);
  state.steps = {1, 2, 3};
  opt->set_state(state);
  EXPECT_EQ(opt->state().steps, state.steps);
  EXPECT_STREQ(sparse_optimizer_name(SparseOptimizer::kAdagrad), "adagrad");
}

}  // namespace
}  // namespace partita::optim
