#pragma once
// Subcommands of the `partita` executable. Each add_* function registers its options on
// a CLI11 subcommand and returns the action to run when that subcommand is chosen.
// Actions return the process exit code; errors are thrown as partita::Error and turned
// into one `error: ...` line by main().
#include <CLI/CLI.hpp>
#include <functional>

namespace partita::cli {

using Action = std::function<int()>;

Action add_generate_command(CLI::App& app);
Action add_partition_command(CLI::App& app);
Action add_info_command(CLI::App& app);
Action add_sample_bench_command(CLI::App& app);
Action add_train_command(CLI::App& app);
Action add_infer_command(CLI::App& app);
Action add_launch_command(CLI::App& app);

// The commands that need torch run in the executable partita-torch (torch_handoff.h).
// torch_registrar gives the add_* function of one of them there (torch_commands.cc), and
// null in the torch-free `partita` (torch_command_names.cc), whose command line names the
// command only and hands it over before parsing.
using Registrar = Action (*)(CLI::App&);
enum class TorchCommand { kSampleBench, kTrain, kInfer, kLaunch };
Registrar torch_registrar(TorchCommand command);

}  // namespace partita::cli
