// StepProfile: see partita/train/step_profile.h.
#include "partita/train/step_profile.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <string_view>
#include <unordered_map>

#include "partita/core/error.h"
#include "partita/train/model_adapter.h"

namespace partita::train {
namespace {

using Clock = std::chrono::steady_clock;

// Scopes that split stages (step_profile.h).
constexpr std::string_view kToBlockTensors = "partita::to_block_tensors";
constexpr std::string_view kFeaturesTensor = "partita::features_tensor";
constexpr std::string_view kAllreduce = "partita::allreduce";

struct OpStats {
  double self_s = 0;
  double inclusive_s = 0;
  int64_t calls = 0;
  int depth = 0;  // calls of this op open on the stack
};

struct Frame {
  int op;
  Clock::time_point start;
  double nested_s;  // inclusive time of the ops nested directly in this one
};

// The ops of one recording thread.
struct OpTable {
  std::vector<Frame> stack;
  std::vector<OpStats> stats;
  std::deque<std::string> names;  // stable storage for the index's keys
  std::unordered_map<std::string_view, int> index;

  int intern(const char* name) {
    const std::string_view key(name != nullptr ? name : "(unnamed)");
    auto it = index.find(key);
    if (it != index.end()) return it->second;
    names.emplace_back(key);
    stats.emplace_back();
    const int id = static_cast<int>(stats.size()) - 1;
    index.emplace(names.back(), id);
    return id;
  }
};

// The table the calling thread records into, null when it records nothing. The callbacks
// of ATen/record_function.h are plain function pointers without a user argument, so a
// thread-local pointer is how they find their table; a thread-local callback fires only on
// the thread that registered it (and threads that inherit its torch state, which find null
// here and are skipped).
thread_local OpTable* t_table = nullptr;

std::unique_ptr<at::ObserverContext> op_start(const at::RecordFunction& fn) {
  OpTable* t = t_table;
  if (t == nullptr) return nullptr;
  const int op = t->intern(fn.name());
  ++t->stats[static_cast<size_t>(op)].depth;
  t->stack.push_back({op, Clock::now(), 0.0});
  return nullptr;  // the frame on the stack holds the start: no allocation per op
}

// RecordFunctions are scoped objects of one thread: they end in reverse order of start.
void op_end(const at::RecordFunction& /*fn*/, at::ObserverContext* /*ctx*/) {
  OpTable* t = t_table;
  if (t == nullptr || t->stack.empty()) return;
  const Clock::time_point now = Clock::now();
  const Frame f = t->stack.back();
  t->stack.pop_back();
  const double inclusive = std::chrono::duration<double>(now - f.start).count();
  OpStats& s = t->stats[static_cast<size_t>(f.op)];
  s.self_s += inclusive - f.nested_s;
  ++s.calls;
  if (--s.depth == 0) s.inclusive_s += inclusive;
  if (!t->stack.empty()) t->stack.back().nested_s += inclusive;
}

// Forwards every call to the wrapped model; times forward.
class ProfiledModel final : public ModelAdapter {
 public:
  ProfiledModel(ModelAdapter& inner, double* forward_s) : inner_(inner), forward_s_(forward_s) {}
  torch::nn::Module& module() override { return inner_.module(); }
  torch::Tensor forward(loader::Batch& batch, double* flops) override {
    Stopwatch watch;
    torch::Tensor out = inner_.forward(batch, flops);
    *forward_s_ += watch.seconds();
    return out;
  }
  void set_dropout_key(uint64_t key) override { inner_.set_dropout_key(key); }
  std::vector<int64_t> config_signature() const override { return inner_.config_signature(); }
  void after_backward() override { inner_.after_backward(); }
  void after_gradient_sum() override { inner_.after_gradient_sum(); }
  bool needs_degrees() const override { return inner_.needs_degrees(); }
  nn::GnnModel* gnn() override { return inner_.gnn(); }
  nn::LinkModel* link() override { return inner_.link(); }
  BatchStaging& staging() override { return inner_.staging(); }

 private:
  ModelAdapter& inner_;
  double* forward_s_;
};

constexpr size_t kLaps = static_cast<size_t>(Lap::kCount);

}  // namespace

struct StepProfile::Impl {
  std::array<double, kLaps> lap_s{};
  std::array<int64_t, kLaps> lap_calls{};
  double forward_s = 0;  // the model's forward, batch to tensors included
  double sample_s = 0, fetch_s = 0;
  int64_t loader_batches = 0;
  OpTable ops;
  std::unique_ptr<ProfiledModel> wrapped;
  ModelAdapter* wrapped_of = nullptr;

  // Inclusive seconds and calls of the op named `name` (0 when never seen).
  double inclusive(std::string_view name) const {
    auto it = ops.index.find(name);
    return it == ops.index.end() ? 0.0 : ops.stats[static_cast<size_t>(it->second)].inclusive_s;
  }
  double lap(Lap l) const { return lap_s[static_cast<size_t>(l)]; }
  int64_t calls(Lap l) const { return lap_calls[static_cast<size_t>(l)]; }
};

StepProfile::StepProfile() : impl_(std::make_unique<Impl>()) {}
StepProfile::~StepProfile() = default;

void StepProfile::add(Lap lap, double seconds) {
  impl_->lap_s[static_cast<size_t>(lap)] += seconds;
  ++impl_->lap_calls[static_cast<size_t>(lap)];
}

void StepProfile::add_loader(double sample_s, double fetch_s) {
  impl_->sample_s += sample_s;
  impl_->fetch_s += fetch_s;
  ++impl_->loader_batches;
}

ModelAdapter& StepProfile::wrap(ModelAdapter& model) {
  if (impl_->wrapped_of != &model) {
    impl_->wrapped = std::make_unique<ProfiledModel>(model, &impl_->forward_s);
    impl_->wrapped_of = &model;
  }
  return *impl_->wrapped;
}

StepProfileReport StepProfile::report() const {
  const Impl& m = *impl_;
  StepProfileReport r;
  r.steps = m.calls(Lap::kBatchWait);
  for (double s : m.lap_s) r.step_s += s;
  const double total = r.step_s > 0 ? r.step_s : 1.0;
  // The finer seams, each clamped into the lap it splits (clock reads differ by nanoseconds).
  const double forward_loss = m.lap(Lap::kForwardLoss);
  const double forward = std::min(m.forward_s, forward_loss);
  const double to_tensors =
      std::min(m.inclusive(kToBlockTensors) + m.inclusive(kFeaturesTensor), forward);
  const double gradient_sum = m.lap(Lap::kGradientSum);
  const double allreduce = std::min(m.inclusive(kAllreduce), gradient_sum);
  // A model without embeddings still passes their seams (a virtual call that does nothing):
  // under kNoStage per call, such a stage is folded into the row before it.
  constexpr double kNoStage = 2e-6;
  const auto row = [&](const char* name, double seconds, int64_t calls, bool optional = false) {
    if (optional && !r.stages.empty() && seconds <= kNoStage * static_cast<double>(calls)) {
      r.stages.back().seconds += seconds;
      r.stages.back().share = r.stages.back().seconds / total;
      return;
    }
    r.stages.push_back({name, seconds, seconds / total, calls, false});
  };
  const int64_t computed = m.calls(Lap::kForwardLoss);  // steps whose batch had seeds
  row("batch wait", m.lap(Lap::kBatchWait), m.calls(Lap::kBatchWait));
  row("step setup (zero_grad)", m.lap(Lap::kStepSetup), m.calls(Lap::kStepSetup));
  row("batch to tensors", to_tensors, computed);
  row("forward", forward - to_tensors, computed);
  row("loss", forward_loss - forward, computed);
  row("backward", m.lap(Lap::kBackward), m.calls(Lap::kBackward));
  row("embedding push", m.lap(Lap::kAfterBackward), m.calls(Lap::kAfterBackward), true);
  row("gradient packing", gradient_sum - allreduce, m.calls(Lap::kGradientSum));
  row("allreduce", allreduce, m.calls(Lap::kGradientSum));
  row("embedding update", m.lap(Lap::kAfterGradients), m.calls(Lap::kAfterGradients), true);
  row("optimizer", m.lap(Lap::kOptimizer), m.calls(Lap::kOptimizer));
  r.stages.push_back(
      {"sampling (loader threads)", m.sample_s, m.sample_s / total, m.loader_batches, true});
  r.stages.push_back(
      {"feature fetch (loader threads)", m.fetch_s, m.fetch_s / total, m.loader_batches, true});

  double self_sum = 0;
  for (size_t i = 0; i < m.ops.stats.size(); ++i) {
    const OpStats& s = m.ops.stats[i];
    r.ops.push_back({m.ops.names[i], s.self_s, s.inclusive_s, s.self_s / total, s.calls});
    self_sum += s.self_s;
  }
  std::sort(r.ops.begin(), r.ops.end(), [](const OpRow& a, const OpRow& b) {
    return a.self_s != b.self_s ? a.self_s > b.self_s : a.name < b.name;
  });
  r.outside_ops_s = std::max(0.0, r.step_s - self_sum);
  return r;
}

OpRecording::OpRecording(StepProfile* profile) : profile_(profile) {
  if (profile_ == nullptr) return;
  PARTITA_CHECK(t_table == nullptr, Error, "internal: two op recordings on one thread");
  t_table = &profile_->impl_->ops;
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback(&op_start, &op_end)
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                   at::RecordScope::USER_SCOPE}));
}

OpRecording::~OpRecording() {
  if (profile_ == nullptr) return;
  at::removeCallback(handle_);
  for (const Frame& f : t_table->stack)  // none is open where the Trainer ends one
    --t_table->stats[static_cast<size_t>(f.op)].depth;
  t_table->stack.clear();
  t_table = nullptr;
}

}  // namespace partita::train
