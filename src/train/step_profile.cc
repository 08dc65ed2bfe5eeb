// StepProfile: see partita/train/step_profile.h.
#include "partita/train/step_profile.h"

#include <ATen/record_function.h>
#include <c10/core/Event.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "partita/core/error.h"
#include "partita/train/model_adapter.h"

// c10::Event::elapsedTime (device time between two events) exists from torch 2.5 on.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
#define PARTITA_EVENT_TIMES 1
#else
#define PARTITA_EVENT_TIMES 0
#endif

namespace partita::train {
namespace {

using Clock = std::chrono::steady_clock;

// Scopes that split stages (step_profile.h).
constexpr std::string_view kToBlockTensors = "partita::to_block_tensors";
constexpr std::string_view kFeaturesTensor = "partita::features_tensor";
constexpr std::string_view kAllreduce = "partita::allreduce";

// Whether `fn` (named `name`) reads device data on the host (step_profile.h, Counts). Called
// from a start callback that captures inputs.
bool is_host_sync(const at::RecordFunction& fn, std::string_view name) {
  if (name == "aten::_local_scalar_dense" || name == "aten::nonzero") return true;
  if (name.rfind("aten::unique", 0) == 0 || name.rfind("aten::_unique", 0) == 0) return true;
  if (name != "aten::copy_") return false;
  const auto inputs = fn.inputs();  // (self, src, non_blocking)
  if (inputs.size() < 2 || !inputs[0].isTensor() || !inputs[1].isTensor()) return false;
  return inputs[0].toTensor().is_cpu() && !inputs[1].toTensor().is_cpu();
}

struct OpStats {
  double self_s = 0;
  double inclusive_s = 0;
  int64_t calls = 0;
  int64_t syncs = 0;  // calls that were host syncs
  int depth = 0;      // calls of this op open on the stack
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
  int64_t aten_ops = 0;  // RecordScope::FUNCTION calls
  int64_t top_ops = 0;   // of them, not nested in another

  int intern(std::string_view key) {
    auto it = index.find(key);
    if (it != index.end()) return it->second;
    names.emplace_back(key);
    stats.emplace_back();
    const int id = static_cast<int>(stats.size()) - 1;
    index.emplace(names.back(), id);
    return id;
  }
};

// Counts of threads that are not the recording one: atomics, and the sync ops by name under a
// mutex (syncs are rare).
struct SharedCounts {
  std::atomic<int64_t> ops{0};
  std::atomic<int64_t> top_ops{0};
  std::atomic<int64_t> syncs{0};
  mutable std::mutex mu;
  std::map<std::string, int64_t> syncs_by_op;

  void count(const at::RecordFunction& fn, std::string_view name, bool top) {
    ops.fetch_add(1, std::memory_order_relaxed);
    if (top) top_ops.fetch_add(1, std::memory_order_relaxed);
    if (!is_host_sync(fn, name)) return;
    syncs.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mu);
    ++syncs_by_op[std::string(name)];
  }
  std::map<std::string, int64_t> by_op() const {
    std::lock_guard<std::mutex> lock(mu);
    return syncs_by_op;
  }
};

// The table the calling thread records into, null when it records nothing. The callbacks
// of ATen/record_function.h are plain function pointers without a user argument, so a
// thread-local pointer is how they find their table; a thread-local callback fires only on
// the thread that registered it and the threads that inherit its torch state, which find
// null here and count into g_inherited.
thread_local OpTable* t_table = nullptr;
// Aten ops open on this thread (any thread a callback fires on): an op started at depth 0 is
// a top-level one, dispatched by the caller rather than by another op.
thread_local int t_aten_depth = 0;

// The process's recordings: the most recent one's counts of inherited threads, the loader's
// counts, and the global callback that counts them while any recording lives.
std::mutex g_mu;
int g_recordings = 0;
uint64_t g_global_handle = 0;
std::atomic<SharedCounts*> g_inherited{nullptr};
SharedCounts g_loader;

std::unique_ptr<at::ObserverContext> op_start(const at::RecordFunction& fn) {
  const char* raw = fn.name();
  const std::string_view name(raw != nullptr ? raw : "(unnamed)");
  const bool aten = fn.scope() == at::RecordScope::FUNCTION;
  const bool top = aten && t_aten_depth == 0;
  if (aten) ++t_aten_depth;
  OpTable* t = t_table;
  if (t == nullptr) {
    // A thread that inherits the recording thread's torch state (autograd's device threads).
    SharedCounts* inherited = g_inherited.load(std::memory_order_acquire);
    if (aten && inherited != nullptr) inherited->count(fn, name, top);
    return nullptr;
  }
  const int op = t->intern(name);
  OpStats& s = t->stats[static_cast<size_t>(op)];
  ++s.depth;
  if (aten) {
    ++t->aten_ops;
    if (top) ++t->top_ops;
    if (is_host_sync(fn, name)) ++s.syncs;
  }
  t->stack.push_back({op, Clock::now(), 0.0});
  return nullptr;  // the frame on the stack holds the start: no allocation per op
}

// RecordFunctions are scoped objects of one thread: they end in reverse order of start.
void op_end(const at::RecordFunction& fn, at::ObserverContext* /*ctx*/) {
  if (fn.scope() == at::RecordScope::FUNCTION && t_aten_depth > 0) --t_aten_depth;
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

// The global callback: the ops of threads without a recording's thread-local callback.
std::unique_ptr<at::ObserverContext> loader_op_start(const at::RecordFunction& fn) {
  if (at::hasThreadLocalCallbacks()) return nullptr;  // a recording's own (or inherited)
  const char* raw = fn.name();
  g_loader.count(fn, raw != nullptr ? raw : "(unnamed)", t_aten_depth++ == 0);
  return nullptr;
}

void loader_op_end(const at::RecordFunction& /*fn*/, at::ObserverContext* /*ctx*/) {
  if (!at::hasThreadLocalCallbacks() && t_aten_depth > 0) --t_aten_depth;
}

// Device-time slots: the laps in order, the forward lap split at the model's forward.
enum Slot {
  kWaitSlot,
  kSetupSlot,
  kForwardSlot,
  kLossSlot,
  kBackwardSlot,
  kAfterBackwardSlot,
  kGradientSlot,
  kAfterGradientsSlot,
  kOptimizerSlot,
  kSlots
};
constexpr int kStepStart = -1;

int slot_of(Lap lap) {
  switch (lap) {
    case Lap::kBatchWait:
      return kWaitSlot;
    case Lap::kStepSetup:
      return kSetupSlot;
    case Lap::kForwardLoss:
      return kLossSlot;
    case Lap::kBackward:
      return kBackwardSlot;
    case Lap::kAfterBackward:
      return kAfterBackwardSlot;
    case Lap::kGradientSum:
      return kGradientSlot;
    case Lap::kAfterGradients:
      return kAfterGradientsSlot;
    case Lap::kOptimizer:
    case Lap::kCount:
      break;
  }
  return kOptimizerSlot;
}

const char* const kSlotNames[kSlots] = {"batch wait",
                                        "step setup (zero_grad)",
                                        "forward (with batch to tensors)",
                                        "loss",
                                        "backward",
                                        "embedding push",
                                        "gradient sum",
                                        "embedding update",
                                        "optimizer"};

constexpr size_t kLaps = static_cast<size_t>(Lap::kCount);

}  // namespace

struct StepProfile::Impl {
  std::array<double, kLaps> lap_s{};
  std::array<int64_t, kLaps> lap_calls{};
  double forward_s = 0;  // the model's forward, batch to tensors included
  double sample_s = 0, fetch_s = 0;
  int64_t loader_batches = 0;
  OpTable ops;
  SharedCounts inherited;  // ops of threads that inherit the recording thread's state
  // The loader's counts over the recordings, and its totals when the current one began.
  int64_t loader_ops = 0, loader_top_ops = 0, loader_syncs = 0;
  std::map<std::string, int64_t> loader_syncs_by_op;
  int64_t loader_ops_before = 0, loader_top_ops_before = 0, loader_syncs_before = 0;
  std::map<std::string, int64_t> loader_syncs_by_op_before;
  std::unique_ptr<ModelAdapter> wrapped;
  ModelAdapter* wrapped_of = nullptr;
  std::optional<c10::Device> device;  // a GPU whose device time is measured
  // Timing events in recording order, each with its slot (kStepStart: a step's start).
  std::vector<std::pair<int, c10::Event>> events;

  // Inclusive seconds of the op named `name` (0 when never seen).
  double inclusive(std::string_view name) const {
    auto it = ops.index.find(name);
    return it == ops.index.end() ? 0.0 : ops.stats[static_cast<size_t>(it->second)].inclusive_s;
  }
  double lap(Lap l) const { return lap_s[static_cast<size_t>(l)]; }
  int64_t calls(Lap l) const { return lap_calls[static_cast<size_t>(l)]; }

  void record_event(int slot) {
    if (!device) return;
    c10::Event event(device->type(), c10::EventFlag::BACKEND_DEFAULT);
    event.record(c10::impl::getDeviceGuardImpl(device->type())->getStream(*device));
    events.emplace_back(slot, std::move(event));
  }

  // Seconds per slot between consecutive events (after waiting for the last one).
  std::array<double, kSlots> device_seconds() const {
    std::array<double, kSlots> out{};
#if PARTITA_EVENT_TIMES
    if (events.empty()) return out;
    events.back().second.synchronize();
    for (size_t i = 1; i < events.size(); ++i) {
      const int slot = events[i].first;
      if (slot == kStepStart) continue;
      out[static_cast<size_t>(slot)] += events[i - 1].second.elapsedTime(events[i].second) * 1e-3;
    }
#endif
    return out;
  }
};

namespace {

// Forwards every call to the wrapped model; times forward.
class ProfiledModel final : public ModelAdapter {
 public:
  ProfiledModel(ModelAdapter& inner, StepProfile::Impl* profile)
      : inner_(inner), profile_(profile) {}
  torch::nn::Module& module() override { return inner_.module(); }
  torch::Tensor forward(loader::Batch& batch, double* flops) override {
    Stopwatch watch;
    torch::Tensor out = inner_.forward(batch, flops);
    profile_->forward_s += watch.seconds();
    profile_->record_event(kForwardSlot);
    return out;
  }
  void set_dropout_key(uint64_t key) override { inner_.set_dropout_key(key); }
  std::vector<int64_t> config_signature() const override { return inner_.config_signature(); }
  void after_backward() override { inner_.after_backward(); }
  void after_gradient_sum() override { inner_.after_gradient_sum(); }
  void idle_training_step() override { inner_.idle_training_step(); }
  bool needs_degrees() const override { return inner_.needs_degrees(); }
  nn::GnnModel* gnn() override { return inner_.gnn(); }
  nn::LinkModel* link() override { return inner_.link(); }
  BatchStaging& staging() override { return inner_.staging(); }

 private:
  ModelAdapter& inner_;
  StepProfile::Impl* profile_;
};

// The counts of `by_op` (name -> syncs) sorted, most first.
std::vector<std::pair<std::string, int64_t>> sorted(std::map<std::string, int64_t> by_op) {
  std::vector<std::pair<std::string, int64_t>> out(by_op.begin(), by_op.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace

StepProfile::StepProfile() : impl_(std::make_unique<Impl>()) {}

StepProfile::StepProfile(const c10::Device& device) : StepProfile() {
#if PARTITA_EVENT_TIMES
  if (!device.is_cpu()) impl_->device = device;
#else
  (void)device;
#endif
}

StepProfile::~StepProfile() = default;

void StepProfile::add(Lap lap, double seconds) {
  impl_->lap_s[static_cast<size_t>(lap)] += seconds;
  ++impl_->lap_calls[static_cast<size_t>(lap)];
  impl_->record_event(slot_of(lap));
}

void StepProfile::begin_step() { impl_->record_event(kStepStart); }

void StepProfile::add_loader(double sample_s, double fetch_s) {
  impl_->sample_s += sample_s;
  impl_->fetch_s += fetch_s;
  ++impl_->loader_batches;
}

ModelAdapter& StepProfile::wrap(ModelAdapter& model) {
  if (impl_->wrapped_of != &model) {
    impl_->wrapped = std::make_unique<ProfiledModel>(model, impl_.get());
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
  std::map<std::string, int64_t> training_syncs = m.inherited.by_op();
  r.training.ops = m.ops.top_ops + m.inherited.top_ops.load();
  r.training.all_ops = m.ops.aten_ops + m.inherited.ops.load();
  r.training.host_syncs = m.inherited.syncs.load();
  for (size_t i = 0; i < m.ops.stats.size(); ++i) {
    const OpStats& s = m.ops.stats[i];
    r.ops.push_back({m.ops.names[i], s.self_s, s.inclusive_s, s.self_s / total, s.calls});
    self_sum += s.self_s;
    if (s.syncs > 0) {
      training_syncs[m.ops.names[i]] += s.syncs;
      r.training.host_syncs += s.syncs;
    }
  }
  r.training.syncs_by_op = sorted(std::move(training_syncs));
  r.loader.ops = m.loader_top_ops;
  r.loader.all_ops = m.loader_ops;
  r.loader.host_syncs = m.loader_syncs;
  r.loader.syncs_by_op = sorted(m.loader_syncs_by_op);
  std::sort(r.ops.begin(), r.ops.end(), [](const OpRow& a, const OpRow& b) {
    return a.self_s != b.self_s ? a.self_s > b.self_s : a.name < b.name;
  });
  r.outside_ops_s = std::max(0.0, r.step_s - self_sum);

  if (!m.events.empty()) {
    const std::array<double, kSlots> device = m.device_seconds();
    double device_total = 0;
    for (double s : device) device_total += s;
    const int64_t calls[kSlots] = {m.calls(Lap::kBatchWait),
                                   m.calls(Lap::kStepSetup),
                                   computed,
                                   computed,
                                   m.calls(Lap::kBackward),
                                   m.calls(Lap::kAfterBackward),
                                   m.calls(Lap::kGradientSum),
                                   m.calls(Lap::kAfterGradients),
                                   m.calls(Lap::kOptimizer)};
    for (int i = 0; i < kSlots; ++i) {
      const double share = device_total > 0 ? device[static_cast<size_t>(i)] / device_total : 0;
      r.device_stages.push_back(
          {kSlotNames[i], device[static_cast<size_t>(i)], share, calls[i], false});
    }
  }
  return r;
}

OpRecording::OpRecording(StepProfile* profile) : profile_(profile) {
  if (profile_ == nullptr) return;
  PARTITA_CHECK(t_table == nullptr, Error, "internal: two op recordings on one thread");
  StepProfile::Impl& m = *profile_->impl_;
  t_table = &m.ops;
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback(&op_start, &op_end)
          .needsInputs(true)
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                   at::RecordScope::USER_SCOPE}));
  g_inherited.store(&m.inherited, std::memory_order_release);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_recordings++ == 0) {
    g_global_handle =
        at::addGlobalCallback(at::RecordFunctionCallback(&loader_op_start, &loader_op_end)
                                  .needsInputs(true)
                                  .scopes({at::RecordScope::FUNCTION}));
  }
  m.loader_ops_before = g_loader.ops.load();
  m.loader_top_ops_before = g_loader.top_ops.load();
  m.loader_syncs_before = g_loader.syncs.load();
  m.loader_syncs_by_op_before = g_loader.by_op();
}

OpRecording::~OpRecording() {
  if (profile_ == nullptr) return;
  StepProfile::Impl& m = *profile_->impl_;
  at::removeCallback(handle_);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    m.loader_ops += g_loader.ops.load() - m.loader_ops_before;
    m.loader_top_ops += g_loader.top_ops.load() - m.loader_top_ops_before;
    m.loader_syncs += g_loader.syncs.load() - m.loader_syncs_before;
    for (const auto& [name, n] : g_loader.by_op()) {
      const int64_t added = n - m.loader_syncs_by_op_before[name];
      if (added > 0) m.loader_syncs_by_op[name] += added;
    }
    if (--g_recordings == 0) at::removeCallback(g_global_handle);
  }
  SharedCounts* expected = &m.inherited;
  g_inherited.compare_exchange_strong(expected, nullptr);
  for (const Frame& f : t_table->stack)  // none is open where the Trainer ends one
    --t_table->stats[static_cast<size_t>(f.op)].depth;
  t_table->stack.clear();
  t_table = nullptr;
}

}  // namespace partita::train
