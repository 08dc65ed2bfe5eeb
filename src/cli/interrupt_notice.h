#pragma once
// What `partita train` says when it is interrupted (Ctrl-C: SIGINT; or SIGTERM, which
// mpirun sends its ranks when it is interrupted): how to go on from where it stopped.
#include <string>

namespace partita::cli {

// "interrupted; resume with --resume --checkpoint-dir DIR (and the same other flags)",
// or, without a checkpoint directory, that a new run starts from the first epoch.
std::string interrupt_message(const std::string& checkpoint_dir);

// Until the process ends, SIGINT and SIGTERM print `message` on stderr (one line) and then
// end the process as the signal would have (exit status 128 + signal). Call once.
void print_on_interrupt(const std::string& message);

}  // namespace partita::cli
