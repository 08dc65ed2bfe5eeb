#include "host_local_flag.h"

#include "enum_option.h"

namespace partita::cli {

CLI::Option* add_host_local_flag(CLI::App& app, runtime::HostLocal* field) {
  return add_enum_option(
      app, "--host-local", field, runtime::host_local_names(),
      "Ranks on one host that opened the same partition directory (same path and the same "
      "partita.json) read each other's features, labels and neighbor samples from the "
      "mapped files instead of sending requests: auto (on where that holds) or off (every "
      "remote row through MPI). Results are identical either way; learned embeddings always "
      "go through MPI");
}

}  // namespace partita::cli
