#pragma once
// Where a training step's wall time goes, on one rank: the profile behind `train --profile`
// (TrainOptions::profile; the Trainer fills it, TrainResult::profile carries its report).
//
// Stages. The Trainer laps a StageClock at each seam of its loop (Lap below); two finer
// seams split the task's forward-and-loss lap: the model's forward, timed by the adapter
// wrap() returns, and the named RecordFunction scopes "partita::to_block_tensors" and
// "partita::features_tensor" inside it (batch to tensors); and the gradient sum's scope
// "partita::allreduce" splits its packing from the allreduce. So the stage rows of a report
// add up to the steps' wall time exactly. The loader's sampling and fetching (Batch::sample_s,
// fetch_s) run on sampler threads while the steps run: reported as rows of their own, marked
// overlapped, outside that sum.
//
// Ops. While an OpRecording is alive, a thread-local RecordFunction callback
// (ATen/record_function.h) times every op its thread runs: aten ops, autograd nodes of
// backward (CPU backward runs on the calling thread) and partita's named kernels and scopes
// ("partita::spmm_forward", ...). Self time excludes the ops nested in an op; inclusive time
// counts an op once even where it nests in itself. Other threads are not timed: an op's
// parallel region on torch's intra-op threads (at::parallel_for) is wall time of the op that
// started it, which is what the step waits for; so the ops' self times plus the time in no op
// add up to the steps' wall time. Several ranks as threads of one process each record their
// own thread.
//
// Counts (ops_per_step, host_syncs_per_step). The aten ops (RecordScope::FUNCTION) are
// counted twice: the top-level ones, which the step's code dispatches itself (each at least
// one dispatch and, on a GPU, usually a kernel launch; what ops_per_step reports), and all of
// them, nested ones included (what an op's implementation dispatches in turn, which depends
// on torch's version and the device). Both apart for two groups of threads:
// - the training thread: the recording thread, and the threads that inherit its torch state
//   while it waits in them (autograd's device threads run a GPU's backward; counted into the
//   most recent recording of the process);
// - the loader: every other thread of the process (sampler threads that run torch ops, e.g.
//   a device sampler), counted for the process (several ranks as threads of one process
//   share the figure).
// A host sync is an op that reads device data on the host, which makes the host wait for
// the device: aten::_local_scalar_dense (.item()), aten::nonzero, aten::unique* and
// aten::_unique* (their output sizes), and aten::copy_ from a device tensor into a CPU one.
// On the CPU nothing waits, but the same ops are counted where they would sync on a GPU (a
// device-to-host copy is then no copy at all and is not seen): what makes the counts of
// `--device cpu --kernels generic` a proxy for a GPU's.
//
// Device time. On a GPU (torch 2.5 or later, whose c10::Event has elapsedTime), each seam
// also records a timing event on the device's current stream, and the report gives each
// lap's device time: from the event of the seam before to its own, on the device's
// timeline (a stage's kernels plus the device's idle gaps in it). On the CPU, and with an
// older torch, the wall times above are all there is.
//
// Cost: none without a StepProfile: no callback is registered, and the Trainer's StageClock
// reads the clock a few times per step as its Stopwatch did. While recording, about a
// microsecond per op (measured +0.85 us per aten::add of a 4-element tensor, before the
// counts' input capture). Not thread-safe: one StepProfile per Trainer, used on its thread;
// an OpRecording must end on the thread that began it.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "partita/core/timer.h"

namespace c10 {
struct Device;
}  // namespace c10

namespace partita::train {

class ModelAdapter;

// The seams of one step at which the Trainer laps its StageClock, in step order.
enum class Lap {
  kBatchWait,       // waiting for the pipeline's next batch
  kStepSetup,       // zero_grad, the dropout key
  kForwardLoss,     // the task's step_loss: batch to tensors, forward, loss
  kBackward,        // loss.backward()
  kAfterBackward,   // the model's after_backward (R-GCN: embedding gradients pushed)
  kGradientSum,     // gradients packed, allreduced, unpacked
  kAfterGradients,  // the model's after_gradient_sum (R-GCN: embedding updates applied)
  kOptimizer,       // optimizer step
  kCount
};

// One row of the stage table.
struct StageRow {
  std::string name;
  double seconds = 0;  // summed over the profiled steps
  double share = 0;    // of the steps' wall time
  int64_t calls = 0;   // steps in which the stage ran (the scopes' calls: the op table)
  // Loader-thread time, overlapped with the steps: not part of their wall time (its share
  // is still of that wall time).
  bool overlapped = false;
};

// One row of the op table.
struct OpRow {
  std::string name;
  double self_s = 0;       // excluding nested ops
  double inclusive_s = 0;  // including them, once per outermost call
  double share = 0;        // self_s over the steps' wall time
  int64_t calls = 0;
};

// Op counts of a group of threads over the profiled steps.
struct OpCounts {
  int64_t ops = 0;         // top-level aten ops (not dispatched by another aten op)
  int64_t all_ops = 0;     // aten ops, nested ones included
  int64_t host_syncs = 0;  // reads of device data on the host (above), nested ones included
  // The host syncs by op name, most first.
  std::vector<std::pair<std::string, int64_t>> syncs_by_op;
};

struct StepProfileReport {
  int64_t steps = 0;
  double step_s = 0;  // the steps' wall time: the sum of the stage rows not overlapped
  // The step's stages in step order, then the loader's rows (overlapped). The embedding
  // stages of a model without embeddings (nothing but a call, under 2 us per step) are
  // folded into the row before them.
  std::vector<StageRow> stages;
  std::vector<OpRow> ops;    // every op seen, by self time, largest first
  double outside_ops_s = 0;  // step wall time in no op (batch wait, Python-free glue...)
  OpCounts training;         // the training thread's (see Counts above)
  OpCounts loader;           // the other threads'
  // Device time per lap (Lap order, the forward lap split into forward and loss; calls and
  // shares as the stage rows'), when measured (see Device time above); empty otherwise.
  std::vector<StageRow> device_stages;
};

class StepProfile {
 public:
  // `device`: the model's (device time is measured on a GPU only).
  explicit StepProfile(const c10::Device& device);
  StepProfile();  // the CPU
  ~StepProfile();
  StepProfile(const StepProfile&) = delete;
  StepProfile& operator=(const StepProfile&) = delete;

  void add(Lap lap, double seconds);
  // The start of a step (its first lap's start), for the device time.
  void begin_step();
  // One batch's loader-thread times.
  void add_loader(double sample_s, double fetch_s);
  // An adapter that forwards every call to `model` and times its forward; owned by this
  // profile, which must outlive its use, as `model` must outlive the profile.
  ModelAdapter& wrap(ModelAdapter& model);

  // The tables of everything added so far (ops: of every recording that has ended).
  StepProfileReport report() const;

  struct Impl;

 private:
  friend class OpRecording;
  std::unique_ptr<Impl> impl_;
};

// Times the calling thread's torch ops, and counts the ops of the training thread and the
// loader (see Counts above), into `profile` from construction to destruction; does nothing
// (registers nothing) when profile is null.
class OpRecording {
 public:
  explicit OpRecording(StepProfile* profile);
  ~OpRecording();
  OpRecording(const OpRecording&) = delete;
  OpRecording& operator=(const OpRecording&) = delete;

 private:
  StepProfile* profile_;
  uint64_t handle_ = 0;
};

// Laps of one step: lap(l) returns the seconds since the previous lap (or construction) and
// adds them to the profile when there is one.
class StageClock {
 public:
  explicit StageClock(StepProfile* profile) : profile_(profile) {
    if (profile_ != nullptr) profile_->begin_step();
  }
  double lap(Lap l) {
    const double s = watch_.seconds();
    watch_.restart();
    if (profile_ != nullptr) profile_->add(l, s);
    return s;
  }

 private:
  StepProfile* profile_;
  Stopwatch watch_;
};

}  // namespace partita::train
