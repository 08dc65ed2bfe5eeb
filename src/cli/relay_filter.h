#pragma once
// What `partita launch` relays of mpirun's stderr (supervise.cc). A rank that fails prints
// one `error: ...` line; Open MPI then adds a banner or two that only restate that a rank
// exited non-zero:
//
//   --------------------------------------------------------------------------
//   Primary job  terminated normally, but 1 process returned
//   a non-zero exit code. Per user-direction, the job has been aborted.
//   --------------------------------------------------------------------------
//   --------------------------------------------------------------------------
//   mpirun detected that one or more processes exited with non-zero status, thus causing
//   the job to be terminated. The first process to do so was:
//   ...
//   --------------------------------------------------------------------------
//
// RelayFilter drops exactly those blocks when a rank printed an `error:` line, before or
// right after them (the README promises one line). Everything else passes unchanged and in
// order: Open MPI's other blocks (a rank killed by a signal, MPI_ABORT, a lost daemon, a
// launch failure), and every block when no rank said why it failed. Output passes through
// at once, partial lines (progress bars) included; only a dash-delimited block is held
// until it closes, and a restating one until the next line shows whether a rank explained.
// Pure: bytes in, bytes out; not thread-safe.
//
// Also here, for supervise.cc: which lines say the job failed, which of them launch explains
// when mpirun hangs after it, and that explanation (is_failure_line, replaces_failure_line,
// stuck_message). Pure functions.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace partita::cli {

struct LaunchPlan;  // launch_plan.h

class RelayFilter {
 public:
  // Takes the next bytes read from mpirun's stderr; returns the bytes to write now.
  std::string feed(std::string_view data);
  // At the end of the stream (mpirun exited): whatever is still held, except a restating
  // banner after a rank's `error:` line.
  std::string finish();
  // Whether a line starting with "error:" has gone by.
  bool error_seen() const { return error_seen_; }

 private:
  void complete_line(std::string line, std::string& out);
  void close_block(std::string& out);

  std::string line_;            // the current line's bytes not written yet
  bool line_passed_ = false;    // part of the current line was written already
  bool line_is_error_ = false;  // the current line, already partly written, starts "error:"
  bool in_block_ = false;       // inside a dash-delimited block, held in block_
  size_t block_lines_ = 0;
  std::string block_;
  std::string held_;         // closed blocks that restate a non-zero exit, not yet decided
  bool error_seen_ = false;  // a line starting with "error:" went by
};

// Whether the text of a dash-delimited block (delimiters included) is one of Open MPI's
// notes that only restate a rank's non-zero exit status.
bool restates_nonzero_exit(const std::string& block);

// The one `error:` line that names a rank killed by a signal, for Open MPI's note about it
// ("mpirun noticed that process rank 1 with PID 7 on node a exited on signal 9 (Killed).",
// or mpiexec's):
// "error: launch: rank 1 (node a) was killed by signal 9 (Killed); mpirun stopped the job".
// Empty for any other line. A rank killed that way prints nothing itself.
std::string lost_rank_error(const std::string& line);

// Whether one line of the job's stderr says the job failed: a rank's `error: ...` line, or
// Open MPI's own report of a rank that exited non-zero or was killed, or of a daemon it lost.
bool is_failure_line(const std::string& line);

// Whether failure line `line` should replace `kept` as the line stuck_message explains: the
// first line of all, unless a rank's own `error:` line comes after Open MPI's banner (it
// names the rank that did not answer; MPI_ABORT's banner can arrive before it).
bool replaces_failure_line(const std::string& kept, const std::string& line);

// The `error:` line launch prints when it had to kill mpirun `waited_s` seconds after the
// job failed with `first_failure` (a line for which is_failure_line holds; may be empty
// when launch itself was interrupted). Names the hosts of the ranks `first_failure`
// mentions besides the reporting one (plan.rank_hosts), as the likely unreachable hosts.
std::string stuck_message(const LaunchPlan& plan, const std::string& first_failure,
                          double waited_s);

}  // namespace partita::cli
