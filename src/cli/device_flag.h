#pragma once
// --device cpu|cuda|cuda:N (train, infer): the text, checked at parsing by
// train::parse_device (the library's one parser), and the device a rank runs on.
#include <CLI/CLI.hpp>
#include <string>

#include "partita/runtime/rank_job.h"
#include "partita/train/train_options.h"

namespace partita::cli {

// Adds the flag to `app`, bound to `*text` (default "cpu"); a value parse_device refuses is
// refused at parsing, with its message.
CLI::Option* add_device_flag(CLI::App& app, std::string* text, const std::string& help);

// This rank's device: `text` parsed and checked against this process's torch
// (train::check_device: ParameterError(device) naming what is missing). "cuda" without an
// index takes the GPU gpu_for_local_rank(local rank, ranks on this host, GPUs seen) gives
// (launch_layout.h): the local rank comes from MPI's shared-memory split (MpiScope), so it
// works under any launcher (mpirun, srun, `partita launch`) and needs no environment
// variable; docs/launch.md, "GPUs".
train::DeviceSpec rank_device(const std::string& text, const runtime::RankContext& rank);

}  // namespace partita::cli
