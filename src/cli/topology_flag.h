#pragma once
// --topology owned|full (train, sample-bench), bound onto SessionOptions::topology.
#include <CLI/CLI.hpp>

#include "partita/runtime/session.h"

namespace partita::cli {

// Adds the flag to `app`; a value other than owned or full is refused at parsing.
CLI::Option* add_topology_flag(CLI::App& app, runtime::Topology* field);

}  // namespace partita::cli
