#pragma once
// What `partita train` says when it is interrupted (Ctrl-C: SIGINT; or SIGTERM, which
// mpirun sends its ranks when it is interrupted): how far the run got and how to go on from
// there, suggesting --resume only when a checkpoint is there to resume from (issue 37).
//
// The command keeps the run's InterruptState up to date as it goes (starting, each epoch,
// each checkpoint, the final test, finished) and hands the line for the current state to
// print_on_interrupt, which formats nothing when the signal comes: the handler only writes
// the line it was last given.
#include <cstdint>
#include <string>

namespace partita::cli {

struct InterruptState {
  enum class Stage {
    kRunning,   // somewhere, not known (partita launch's own notice)
    kStarting,  // before the first training step: loading, setting up, restoring
    kTraining,  // in epoch `epoch`
    kTesting,   // after the last epoch, in the final test evaluation
    kFinished,  // training and the test are done (`results`)
  };
  Stage stage = Stage::kRunning;
  std::string checkpoint_dir;    // --checkpoint-dir; empty: none
  int64_t checkpoint_epoch = 0;  // epochs done by the latest checkpoint in it; 0: none
  int64_t epoch = 0;             // kTraining: the epoch being trained (1-based)
  std::string results;           // kFinished: the final metrics, e.g. "test_acc=0.8120"
};

// The line for `state`, starting with "interrupted" (launch looks for that word), e.g.
//   "interrupted while starting, before epoch 1: nothing was trained"
//   "interrupted in epoch 1, before the first checkpoint: DIR holds none, so there is
//    nothing to resume; run the same command again to start over"
//   "interrupted in epoch 5; resume with --resume --checkpoint-dir DIR (and the same other
//    flags) to go on after epoch 4"
//   "interrupted after the run had finished (test_acc=0.8120): nothing to resume"
// --resume is suggested only when DIR holds a checkpoint (checkpoint_epoch > 0).
std::string interrupt_message(const InterruptState& state);

// Epochs done by the latest checkpoint in `dir` (checkpoint-<E>.pt, train/checkpoint.h); 0
// when there is none, no `dir`, or it cannot be read (the run itself reports that).
int64_t latest_checkpoint_epochs(const std::string& dir);

// Until the process ends, SIGINT and SIGTERM print `message` on stderr (one line, after a
// newline that ends a progress bar's line) and then end the process as the signal would
// have (exit status 128 + signal). Call again to change the line; a signal never sees a
// half-written one. Call from one thread at a time.
void print_on_interrupt(const std::string& message);

// The notice of one train run, on the rank that prints it: its InterruptState, handed to
// print_on_interrupt at every change (and, with -v, logged: "on Ctrl-C: <line>"). Construct
// it first thing (the handler is installed then), and report the run's progress from the
// training thread.
class InterruptNotice {
 public:
  // Starting, with the latest checkpoint already in `checkpoint_dir` (empty: none).
  explicit InterruptNotice(const std::string& checkpoint_dir);

  // Epoch `epoch` (1-based) has begun.
  void training(int64_t epoch);
  // Epoch `epoch` is done and, with a checkpoint directory, its checkpoint written; the next
  // epoch or, after the `last`, the final test follows.
  void epoch_done(int64_t epoch, bool last);
  // Training and the test are done; `results` as printed, e.g. "test_acc=0.8120".
  void finished(const std::string& results);
  const InterruptState& state() const { return state_; }

 private:
  void update();
  InterruptState state_;
};

}  // namespace partita::cli
