#include "interrupt_notice.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>

#include "partita/core/log.h"
#include "partita/train/checkpoint.h"

namespace partita::cli {
namespace {

// Two buffers: print_on_interrupt fills the one the handler does not read, then switches.
// A handler may not allocate or format; it writes the current buffer. Longer lines are cut.
struct Line {
  char text[4096];
  size_t length = 0;
};
Line g_lines[2];
std::atomic<int> g_current{0};
bool g_installed = false;

void on_signal(int sig) {
  const Line& line = g_lines[g_current.load()];
  ssize_t ignored = ::write(STDERR_FILENO, line.text, line.length);
  (void)ignored;
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// " while starting", " in epoch 3", " in the final test, ...": where the run was.
std::string where(const InterruptState& s) {
  switch (s.stage) {
    case InterruptState::Stage::kRunning:
      return "";
    case InterruptState::Stage::kStarting:
      return " while starting";
    case InterruptState::Stage::kTraining:
      return fmt::format(" in epoch {}", s.epoch);
    case InterruptState::Stage::kTesting:
      return " in the final test, after the last epoch";
    case InterruptState::Stage::kFinished:
      break;
  }
  return " after the run had finished";
}

}  // namespace

int64_t latest_checkpoint_epochs(const std::string& dir) {
  if (dir.empty()) return 0;
  try {
    const std::optional<std::string> path = train::latest_checkpoint(dir);
    if (!path) return 0;
    const std::string name = std::filesystem::path(*path).stem().string();
    return std::stoll(name.substr(name.rfind('-') + 1));
  } catch (const std::exception&) {
    return 0;
  }
}

std::string interrupt_message(const InterruptState& s) {
  using Stage = InterruptState::Stage;
  if (s.stage == Stage::kFinished)
    return fmt::format("interrupted after the run had finished{}: nothing to resume",
                       s.results.empty() ? "" : " (" + s.results + ")");
  if (s.checkpoint_dir.empty()) {
    if (s.stage == Stage::kStarting)
      return "interrupted while starting, before epoch 1: nothing was trained";
    return fmt::format(
        "interrupted{}; without --checkpoint-dir nothing was saved, so a new run starts from "
        "epoch 1 (pass --checkpoint-dir DIR to be able to resume)",
        where(s));
  }
  if (s.checkpoint_epoch > 0)
    return fmt::format(
        "interrupted{}; resume with --resume --checkpoint-dir {} (and the same other flags) to "
        "{} epoch {}",
        where(s), s.checkpoint_dir,
        s.stage == Stage::kTesting ? "test the model of" : "go on after", s.checkpoint_epoch);
  if (s.stage == Stage::kStarting)
    return fmt::format(
        "interrupted while starting, before epoch 1: nothing was trained, and {} holds no "
        "checkpoint to resume from",
        s.checkpoint_dir);
  const std::string at = where(s);
  return fmt::format(
      "interrupted{}{} before the first checkpoint: {} holds none, so there is nothing to "
      "resume; run the same command again to start over",
      at, at.empty() ? "" : ",", s.checkpoint_dir);
}

void print_on_interrupt(const std::string& message) {
  const std::string text = "\n" + message + "\n";  // after a progress bar's line
  const int next = 1 - g_current.load();
  Line& line = g_lines[next];
  line.length = std::min(text.size(), sizeof(line.text));
  std::memcpy(line.text, text.data(), line.length);
  g_current.store(next);
  if (g_installed) return;
  g_installed = true;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM}) ::sigaction(sig, &action, nullptr);
}

InterruptNotice::InterruptNotice(const std::string& checkpoint_dir) {
  state_.stage = InterruptState::Stage::kStarting;
  state_.checkpoint_dir = checkpoint_dir;
  state_.checkpoint_epoch = latest_checkpoint_epochs(checkpoint_dir);
  update();
}

void InterruptNotice::training(int64_t epoch) {
  state_.stage = InterruptState::Stage::kTraining;
  state_.epoch = epoch;
  update();
}

void InterruptNotice::epoch_done(int64_t epoch, bool last) {
  if (!state_.checkpoint_dir.empty()) state_.checkpoint_epoch = epoch;
  state_.stage = last ? InterruptState::Stage::kTesting : InterruptState::Stage::kTraining;
  state_.epoch = last ? epoch : epoch + 1;
  update();
}

void InterruptNotice::finished(const std::string& results) {
  state_.stage = InterruptState::Stage::kFinished;
  state_.results = results;
  update();
}

void InterruptNotice::update() {
  const std::string line = interrupt_message(state_);
  log_debug("on Ctrl-C: {}", line);
  print_on_interrupt(line);
}

}  // namespace partita::cli
