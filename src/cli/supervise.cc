// Supervision of the launcher process: see supervise.h.
#include "supervise.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partita/core/error.h"
#include "relay_filter.h"

namespace partita::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Every process below `root` (children, their children, ...), from /proc.
std::vector<pid_t> descendants(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const size_t paren = stat.rfind(')');  // the command name may hold spaces
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 1));
    char state = 0;
    pid_t parent = 0;
    if (fields >> state >> parent) children[parent].push_back(std::stoi(name));
  }
  std::vector<pid_t> found;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t pid = todo.back();
    todo.pop_back();
    for (pid_t child : children[pid]) {
      found.push_back(child);
      todo.push_back(child);
    }
  }
  return found;
}

// Sends `sig` to mpirun's process group and to everything it started on this host (some
// children, such as ssh or the local ranks, may sit in process groups of their own).
void signal_job(pid_t pid, int sig) {
  for (pid_t p : descendants(pid)) ::kill(p, sig);
  ::kill(-pid, sig);
  ::kill(pid, sig);
}

// Writes all of `data` to fd 2 (relaying mpirun's stderr); a failed write drops the rest.
void relay(const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(STDERR_FILENO, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// Starts plan.argv, with plan.env set, in a process group of its own, its stderr the pipe end
// `err_write`, the signal mask `mask` restored. Returns its pid.
pid_t start_job(const LaunchPlan& plan, const sigset_t& mask, int err_write) {
  std::vector<char*> args;
  for (const std::string& word : plan.argv) args.push_back(const_cast<char*>(word.c_str()));
  args.push_back(nullptr);
  // The child inherits these (launch's own environment is of no further use to it).
  for (const auto& [name, value] : plan.env) ::setenv(name.c_str(), value.c_str(), 1);
  const std::string exec_failed = "error: " + plan.argv[0] + ": cannot execute (";
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  PARTITA_CHECK(pid >= 0, Error, "launch: cannot fork ({})", std::strerror(errno));
  if (pid == 0) {  // the child: only async-signal-safe calls until exec
    ::setpgid(0, 0);
    ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    ::dup2(err_write, STDERR_FILENO);
    // In its own process group mpirun is in the background: a terminal on stdin would
    // stop it (SIGTTIN) when it forwards stdin to rank 0. The ranks read no stdin.
    if (::isatty(STDIN_FILENO)) {
      const int null = ::open("/dev/null", O_RDONLY);
      if (null >= 0) ::dup2(null, STDIN_FILENO);
    }
    ::execvp(args[0], args.data());
    const char* why = std::strerror(errno);
    relay(exec_failed.data(), exec_failed.size());
    relay(why, std::strlen(why));
    relay(")\n", 2);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: whichever runs first; EACCES after exec is harmless
  return pid;
}

// What launch keeps of mpirun's stderr while it relays it (RelayFilter decides what shows).
struct StderrWatch {
  RelayFilter filter;
  std::string pending;        // stderr bytes after the last newline
  std::string first_failure;  // the line saying the job failed (replaces_failure_line)
  std::string lost_rank;      // the error line for the first rank killed by a signal
  bool notice_seen = false;   // a rank printed its "interrupted..." line

  // Relays `size` bytes read from mpirun's stderr and reads its complete lines; after
  // mpirun exited (`exited`), only for a rank killed by a signal.
  void take(const char* data, size_t size, bool exited) {
    const std::string shown = filter.feed(std::string_view(data, size));
    relay(shown.data(), shown.size());
    pending.append(data, size);
    for (size_t eol; (eol = pending.find('\n')) != std::string::npos;) {
      const std::string line = pending.substr(0, eol);
      pending.erase(0, eol + 1);
      if (lost_rank.empty()) lost_rank = lost_rank_error(line);
      if (exited) continue;
      notice_seen = notice_seen || line.rfind("interrupted", 0) == 0;
      if (is_failure_line(line) && replaces_failure_line(first_failure, line)) first_failure = line;
    }
    if (!exited && pending.size() > 65536) pending.clear();  // a progress bar without newlines
  }
};

// The end of a job: since when it is ending (failed, or launch was told to stop) and since
// when launch has been killing it.
struct Teardown {
  std::optional<Clock::time_point> ending;  // since the job failed or launch was told to stop
  std::optional<Clock::time_point> killed;  // since launch sent SIGTERM to the job
  bool gave_up = false;                     // launch killed the job after the timeout
};

// How long to wait for mpirun's next word (ms; -1: no limit), after sending SIGTERM to the
// job `timeout` seconds after it began ending; nullopt once, 2 s after that, it killed the
// job (SIGKILL) and reaped mpirun into `status`.
std::optional<int> wait_ms(Teardown& t, pid_t pid, double timeout, int& status) {
  for (;;) {
    if (!t.ending) return -1;
    const double left =
        t.killed ? 2.0 - seconds_since(*t.killed) : timeout - seconds_since(*t.ending);
    if (left > 0) return static_cast<int>(left * 1000) + 1;
    if (t.killed) {
      signal_job(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return std::nullopt;
    }
    signal_job(pid, SIGTERM);
    t.killed = Clock::now();
    t.gave_up = true;
  }
}

}  // namespace

int supervise(const LaunchPlan& plan, double teardown_timeout,
              const std::function<std::string()>& interrupt_notice) {
  sigset_t handled;
  sigemptyset(&handled);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&handled, sig);
  sigset_t previous;
  PARTITA_CHECK(::sigprocmask(SIG_BLOCK, &handled, &previous) == 0, Error,
                "launch: cannot block signals ({})", std::strerror(errno));
  const int signals = ::signalfd(-1, &handled, SFD_CLOEXEC);
  int err[2];
  PARTITA_CHECK(signals >= 0 && ::pipe2(err, O_CLOEXEC) == 0, Error,
                "launch: cannot set up watching mpirun ({})", std::strerror(errno));
  const pid_t pid = start_job(plan, previous, err[1]);
  ::close(err[1]);

  StderrWatch watch;
  Teardown teardown;
  bool stopped = false;  // launch got SIGINT/SIGTERM/SIGHUP
  bool err_open = true;
  int status = 0;
  for (;;) {
    const std::optional<int> timeout_ms = wait_ms(teardown, pid, teardown_timeout, status);
    if (!timeout_ms) break;
    pollfd fds[2] = {{signals, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0}};
    if (::poll(fds, 2, *timeout_ms) < 0 && errno != EINTR)
      throw Error(fmt::format("launch: poll: {}", std::strerror(errno)));
    if (fds[1].revents != 0) {
      char buffer[8192];
      const ssize_t n = ::read(err[0], buffer, sizeof(buffer));
      if (n > 0) {
        watch.take(buffer, static_cast<size_t>(n), /*exited=*/false);
        if (!watch.first_failure.empty() && !teardown.ending) teardown.ending = Clock::now();
      } else if (n == 0 || errno != EINTR) {
        err_open = false;
      }
    }
    if (fds[0].revents != 0) {
      signalfd_siginfo info;
      if (::read(signals, &info, sizeof(info)) == sizeof(info) && info.ssi_signo != SIGCHLD) {
        // Forwarded to the group, as a terminal would; a second request kills at once.
        if (stopped)
          signal_job(pid, SIGKILL);
        else
          ::kill(-pid, static_cast<int>(info.ssi_signo));
        stopped = true;
        if (!teardown.ending) teardown.ending = Clock::now();
      }
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      // Drain what mpirun wrote last, without waiting on processes that inherited its stderr.
      ::fcntl(err[0], F_SETFL, O_NONBLOCK);
      char buffer[8192];
      for (ssize_t n; err_open && (n = ::read(err[0], buffer, sizeof(buffer))) > 0;)
        watch.take(buffer, static_cast<size_t>(n), /*exited=*/true);
      break;
    }
  }
  const std::string rest = watch.filter.finish();
  relay(rest.data(), rest.size());
  // A rank killed by a signal said nothing: one error line names it (Open MPI's note above).
  const bool failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  if (failed && !stopped && !watch.filter.error_seen() && !watch.lost_rank.empty()) {
    relay(watch.lost_rank.data(), watch.lost_rank.size());
    relay("\n", 1);
  }
  ::close(err[0]);
  ::close(signals);
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  const std::string notice =
      stopped && !watch.notice_seen && interrupt_notice ? interrupt_notice() : "";
  if (!notice.empty()) {
    std::fprintf(stderr, "%s\n", notice.c_str());
    std::fflush(stderr);
  }
  if (teardown.gave_up) throw Error(stuck_message(plan, watch.first_failure, teardown_timeout));
  return WIFEXITED(status) ? WEXITSTATUS(status)
                           : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace partita::cli
