#pragma once
// Test hook: a rank that dies mid-partition (tests/partition/partition_mpi.sh). When the
// environment variable PARTITA_TEST_KILL is "PHASE:RANK" and names this phase and rank,
// kill_if_asked kills the process with SIGKILL (no cleanup, no message), as the OOM killer
// or a lost host would. Phases of the distributed pipeline: read, build_graph, assign (before
// each stage ends) and write (the output files created, nothing yet in them). Unset or any
// other value: does nothing.
#include <signal.h>

#include <cstdlib>
#include <string>

namespace partita::partition {

inline void kill_if_asked(const char* phase, int rank) {
  const char* asked = std::getenv("PARTITA_TEST_KILL");
  if (asked == nullptr) return;
  if (std::string(asked) == std::string(phase) + ":" + std::to_string(rank)) ::raise(SIGKILL);
}

}  // namespace partita::partition
