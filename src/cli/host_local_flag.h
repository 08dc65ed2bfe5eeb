#pragma once
// --host-local auto|off (train, infer, sample-bench), bound onto SessionOptions::host_local.
#include <CLI/CLI.hpp>

#include "partita/runtime/host_local.h"

namespace partita::cli {

// Adds the flag to `app`; a value other than auto or off is refused at parsing.
CLI::Option* add_host_local_flag(CLI::App& app, runtime::HostLocal* field);

}  // namespace partita::cli
