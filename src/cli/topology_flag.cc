#include "topology_flag.h"

#include "enum_option.h"

namespace partita::cli {

CLI::Option* add_topology_flag(CLI::App& app, runtime::Topology* field) {
  return add_enum_option(
      app, "--topology", field, runtime::topology_names(),
      "Which in-edges a rank maps for sampling: owned (its own part's; other ranks' nodes "
      "are sampled by their owners, by request) or full (every part's, from the directory "
      "every rank reads: every node is sampled here, no sampling requests; feature rows stay "
      "with their owners). Samples are identical either way; `partita launch` passes full "
      "with --device cuda (docs/training.md, Topology)");
}

}  // namespace partita::cli
