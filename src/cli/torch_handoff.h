#pragma once
// `partita` is two executables. `partita` itself links no torch: it runs generate,
// partition and info, answers --help, --version and an unknown or missing command, and
// starts in milliseconds. The commands that need torch (train, infer, sample-bench,
// launch: commands.h's add_torch_commands) run in `partita-torch`, the same command line
// with every command, which `partita` execs in its own place: the same process id,
// arguments (argv[0] included) and environment, so mpirun, signals and exit codes see one
// process as before. Loading torch (Debian's pulls in ~300 shared libraries) costs about a
// second per process; a partition or info run no longer pays it.
namespace partita::cli {

// The name of the torch executable, looked for beside the running one.
inline constexpr const char* kTorchExecutable = "partita-torch";

// Replaces this process with kTorchExecutable from the directory of /proc/self/exe, given
// `argv` as they are. Returns only when that fails, after printing one `error:` line that
// names the path, and then returns kExitFailure.
int hand_over_to_torch_executable(char** argv);

}  // namespace partita::cli
