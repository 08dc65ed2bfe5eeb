#include "interrupt_notice.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace partita::cli {
namespace {

// The line the handler writes: formatted before any signal can come (a handler may not
// allocate). Longer messages are cut.
char g_message[4096];
size_t g_length = 0;

void on_signal(int sig) {
  ssize_t ignored = ::write(STDERR_FILENO, g_message, g_length);
  (void)ignored;
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

std::string interrupt_message(const std::string& checkpoint_dir) {
  if (checkpoint_dir.empty())
    return "interrupted; no --checkpoint-dir was given, so a new run starts from the first "
           "epoch (pass --checkpoint-dir DIR to be able to resume)";
  return "interrupted; resume with --resume --checkpoint-dir " + checkpoint_dir +
         " (and the same other flags)";
}

void print_on_interrupt(const std::string& message) {
  const std::string line = "\n" + message + "\n";  // after a progress bar's line
  g_length = std::min(line.size(), sizeof(g_message));
  std::memcpy(g_message, line.data(), g_length);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM}) ::sigaction(sig, &action, nullptr);
}

}  // namespace partita::cli
