#pragma once
// Sparse optimizers of learned embedding tables: per-row state and update rules, applied
// only to the rows that have a gradient (store/dist_embedding.h calls them).
//
// Why a layer of its own. These are training algorithms, so they do not belong in store/
// (which holds tables and serves them); train/ is torch's layer (DESIGN.md: only nn/,
// train/, python/ and the CLI include torch), and these work on plain float rows that
// runtime/ and store/ create long before any torch code runs. So optim/ sits right above
// core/, depends on nothing else and includes no torch: store/ calls it through
// RowOptimizer, and a new sparse optimizer is one class here and one enum value.
//
// Rules (state per row, float32; g is the row's summed gradient of one step):
//   SGD      x -= lr g
//   Adagrad  s += g*g (elementwise, as torch's Adagrad; DGL's SparseAdagrad keeps the row's
//            mean of squares instead);  x -= lr g / (sqrt(s) + eps)
//   Adam     lazy (rows without a gradient keep m, v and t), with a per-row step counter
//            as DGL's SparseAdam (torch's SparseAdam counts steps per tensor): t += 1,
//            m = b1 m + (1-b1) g,  v = b2 v + (1-b2) g*g,
//            x -= lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
// The float expressions are fixed: changing their order changes trained values.
//
// Thread-safety: a RowOptimizer is not thread-safe; its owner serializes step() and the
// state calls (DistEmbedding holds its table lock).
#include <cstdint>
#include <memory>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/core/name_table.h"

namespace partita::optim {

// The numbers are stored in embedding state (docs/formats.md): never renumber.
enum class SparseOptimizer : uint32_t { kSgd = 0, kAdagrad = 1, kAdam = 2 };

// sgd, adagrad, adam (partita.DistGraph(sparse_optimizer=), embedding state files).
const NameTable<SparseOptimizer>& sparse_optimizer_names();
// The name of `kind` in that table; "unknown" for another value.
const char* sparse_optimizer_name(SparseOptimizer kind);

struct SparseOptimizerOptions {
  SparseOptimizer kind = SparseOptimizer::kAdam;
  float lr = 0.01f;
  float beta1 = 0.9f;    // Adam only
  float beta2 = 0.999f;  // Adam only
  float eps = 1e-8f;     // Adagrad and Adam (DGL's SparseAdagrad uses 1e-10)
};

// What a RowOptimizer keeps for `rows` rows of `dim` values (what checkpoints save).
struct SparseOptimizerState {
  std::vector<float> first;    // Adagrad: sums of squares; Adam: m. [rows, dim]; SGD: empty
  std::vector<float> second;   // Adam: v, [rows, dim]; else empty
  std::vector<int64_t> steps;  // Adam: steps per row, [rows]; else empty
};

// The sizes of each state array for `kind` over rows x dim, zero-filled.
SparseOptimizerState empty_state(SparseOptimizer kind, int64_t rows, int64_t dim);

class RowOptimizer {
 public:
  // State zero for rows x dim (use make_row_optimizer; this is for the subclasses).
  RowOptimizer(const SparseOptimizerOptions& options, int64_t rows, int64_t dim);
  virtual ~RowOptimizer() = default;
  virtual SparseOptimizer kind() const = 0;
  // One step of each row rows[k] of `table` ([rows, dim] row-major) with gradient
  // grads[k * dim, (k + 1) * dim), in the order given. Rows must be distinct and in range
  // (not checked: the caller built them).
  virtual void step(float* table, ArrayView<const int64_t> rows, const float* grads) = 0;
  const SparseOptimizerState& state() const { return state_; }
  // Replaces the state; its array sizes must be those of empty_state() (Error otherwise).
  void set_state(SparseOptimizerState state);

 protected:
  SparseOptimizerOptions options_;
  int64_t rows_;
  int64_t dim_;
  SparseOptimizerState state_;
};

// The optimizer of options.kind over a table of rows x dim, its state zero. Options are
// checked by the caller (who names them in its own words).
std::unique_ptr<RowOptimizer> make_row_optimizer(const SparseOptimizerOptions& options,
                                                 int64_t rows, int64_t dim);

}  // namespace partita::optim
