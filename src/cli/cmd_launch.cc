// partita launch: start train, infer, sample-bench, partition, generate or another program
// (a Python script) on several ranks through mpirun or srun.
// The decisions live in launch_plan.{h,cc} (pure); this file gathers the facts they need
// (environment, binary path, hostfile, part count, cores), prints the result or runs it.
//
// Running is supervised (supervise.h), not exec'd.
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>

#include "command_line.h"
#include "commands.h"
#include "error_text.h"
#include "global_flags.h"
#include "interrupt_notice.h"
#include "launch_plan.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/partition/format.h"
#include "shell_quote.h"
#include "supervise.h"
#include "torch_handoff.h"

extern char** environ;

namespace partita::cli {
namespace {

constexpr const char* kDescription =
    "Run train, infer, sample-bench, partition or generate (--layout chunked) on several\n"
    "ranks, on this host or across hosts: builds the mpirun command (srun inside a Slurm\n"
    "job) and runs it, watching it: a job that failed but whose mpirun hangs (an unreachable\n"
    "host) is killed after --teardown-timeout seconds; a rank killed by a signal is named in\n"
    "one error: line.\n"
    "--dry-run prints the command instead. The command for the ranks comes after --:\n"
    "  partita launch --hosts node1,node2 --procs-per-host 2 -- train --parts /shared/p4\n"
    "Any other program runs the same way, e.g. a script on the Python package:\n"
    "  partita launch -- python3 train.py --parts /shared/p4";

constexpr const char* kFooter =
    "Hosts: --hosts or --hostfile; else, inside a Slurm job (SLURM_JOB_ID set), the job's\n"
    "nodes through srun (--mpirun selects mpirun there); else this host alone.\n"
    "Ranks = hosts x procs-per-host; for a partition of more than one part they must equal\n"
    "its parts (one rank per part). Layout rule (docs/launch.md): one rank per socket (one\n"
    "per host on a 1-socket host) with its cores as threads; a 1-part directory runs the\n"
    "rule's ranks (replicated mode when several), a program or command without --parts 1\n"
    "per host. Each rank gets the threads its command picks by itself on its share of the\n"
    "cores: train its cores as torch threads (less the sampler threads above 4) plus\n"
    "sampler threads, infer its cores as torch threads, partition and generate its cores\n"
    "as --threads. More ranks per host only when one rank cannot hold the graph (then one\n"
    "part per rank). launch prints the layout in one line, and what the rule would run\n"
    "when that differs.\n"
    "Every host must see the partition directory (--parts) and this partita binary at the\n"
    "same paths: put them on a shared filesystem, or copy them to the same place on every\n"
    "host. A relative --parts is made absolute.\n"
    "Forwarded: mpirun passes (-x) every PARTITA_* variable, OMP_NUM_THREADS and\n"
    "OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) that is set, and each --env NAME; srun passes the\n"
    "whole environment. -q/-v given before `launch` apply to the ranks too.\n"
    "Binding: by default each rank is bound to cores/procs-per-host cores of its own (mpirun\n"
    "--map-by ppr:N:node:PE=K --bind-to core) when the hosts have at least procs-per-host\n"
    "cores, else not bound. The hosts are assumed to have this host's cores (those launch\n"
    "may use); say otherwise with --cores-per-host. --parts, --checkpoint-dir and\n"
    "--metrics-out of the command are made absolute. A terminal on stderr sets\n"
    "PARTITA_PROGRESS=bar for the ranks (unless set). Across hosts, Open MPI's TCP keepalive\n"
    "is shortened so that a lost host ends the job (OMPI_MCA_oob_tcp_keepalive_* override).\n"
    "With --dry-run, a missing --parts directory or launcher is only a warning.\n"
    "A program instead of a partita command (python3 script.py ...): its arguments are its\n"
    "own, but a --parts DIR gives the ranks as above (and is made absolute, as are a relative\n"
    "program path and a Python script's path); PYTHONPATH is forwarded too; -q/-v do not apply.\n"
    "mpirun's notes that only restate a rank's non-zero exit (\"Primary job terminated\n"
    "normally, but 1 process returned a non-zero exit code...\") are not shown after the\n"
    "rank's own error: line; everything else mpirun says is.\n"
    "See docs/launch.md for the multi-host recipe.";

struct Flags {
  LaunchOptions options;
  int procs_per_host = 0;
  int cores_per_host = 0;
  int torch_threads = 0;
  int sampler_threads = 0;
  std::string bind;
  std::string mpirun;
  double teardown_timeout = 10;
};

// Physical cores among the CPUs this process may run on (its affinity mask, which taskset
// and cgroup cpusets narrow): distinct (package, core) pairs from sysfs; the CPU count
// when sysfs says nothing.
int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  std::set<std::pair<std::string, std::string>> cores;
  auto read_word = [](const std::string& path) {
    std::ifstream in(path);
    std::string word;
    in >> word;
    return word;
  };
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    const std::string core = read_word(dir + "core_id");
    if (core.empty()) return CPU_COUNT(&set);
    cores.emplace(read_word(dir + "physical_package_id"), core);
  }
  return static_cast<int>(cores.size());
}

// The CPUs of a sysfs CPU list ("0-3,8-11"); malformed ranges are skipped.
std::set<int> parse_cpu_list(const std::string& list) {
  std::set<int> cpus;
  std::stringstream ranges(list);
  for (std::string range; std::getline(ranges, range, ',');) {
    const size_t dash = range.find('-');
    try {
      const int lo = std::stoi(range.substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(range.substr(dash + 1));
      for (int cpu = lo; cpu <= hi && cpu < CPU_SETSIZE; ++cpu) cpus.insert(cpu);
    } catch (const std::exception&) {
    }
  }
  return cpus;
}

// Whether this process's CPU affinity is narrower than the CPUs its cgroup allows (or, with
// no cpuset cgroup found, the online CPUs): taskset or numactl, which Open MPI's mapping does
// not see (it binds within the cgroup's cpuset, but `taskset -c 1 mpirun --bind-to core`
// placed its rank on CPU 0).
bool affinity_narrower_than_cpuset() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return false;
  auto read_line = [](const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
  };
  std::string allowed;
  std::ifstream cgroups("/proc/self/cgroup");
  for (std::string line; allowed.empty() && std::getline(cgroups, line);) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (controllers.empty())  // cgroup v2
      allowed = read_line("/sys/fs/cgroup" + path + "/cpuset.cpus.effective");
    else if (("," + controllers + ",").find(",cpuset,") != std::string::npos)  // v1
      allowed = read_line("/sys/fs/cgroup/cpuset" + path + "/cpuset.effective_cpus");
  }
  if (allowed.empty()) allowed = read_line("/sys/devices/system/cpu/online");
  const std::set<int> cpus = parse_cpu_list(allowed);
  if (cpus.empty()) return false;
  for (int cpu : cpus)
    if (!CPU_ISSET(cpu, &set)) return true;
  return false;
}

// Sockets among the CPUs this process may run on: distinct physical_package_id values, or
// NUMA nodes (/sys/devices/system/node/node*/cpulist) holding any of them, whichever is
// larger (a socket split into NUMA nodes counts as several); 1 when sysfs says nothing.
int usable_sockets() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  std::set<std::string> packages;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                     "/topology/physical_package_id");
    std::string word;
    if (in >> word) packages.insert(word);
  }
  int nodes = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("node", 0) != 0 || name.size() == 4 ||
        name.find_first_not_of("0123456789", 4) != std::string::npos)
      continue;
    std::ifstream in(entry.path() / "cpulist");
    std::string list;
    in >> list;
    for (int cpu : parse_cpu_list(list)) {
      if (CPU_ISSET(cpu, &set)) {
        ++nodes;
        break;
      }
    }
  }
  return std::max<int>({1, static_cast<int>(packages.size()), nodes});
}

std::map<std::string, std::string> environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

// The binary the ranks run: `partita` beside this partita-torch (torch_handoff.h), which
// runs a torch-free command without loading torch and hands the others back here; this
// binary itself when there is none.
std::string self_binary() {
  std::error_code ec;
  std::filesystem::path path = std::filesystem::read_symlink("/proc/self/exe", ec);
  PARTITA_CHECK(!ec, Error, "/proc/self/exe: cannot find the partita binary ({})", ec.message());
  const std::filesystem::path front = path.parent_path() / "partita";
  if (path.filename() == kTorchExecutable && std::filesystem::exists(front, ec))
    return front.string();
  return path.string();
}

// Reads the hostfile into `facts` (text, or why it could not be read). Only a regular file
// is opened: opening a named pipe would block until something writes to it.
void read_hostfile(const std::string& path, LaunchFacts& facts) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::is_regular_file(status)) {
    facts.hostfile_error = ec                                      ? ec.message()
                           : std::filesystem::is_directory(status) ? "is a directory"
                                                                   : "not a regular file";
    return;
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (in) {
    std::ostringstream text;
    text << in.rdbuf();
    if (!in.bad()) {
      facts.hostfile_text = text.str();
      return;
    }
  }
  facts.hostfile_error = std::strerror(errno != 0 ? errno : EIO);
}

// Whether `program` would be found by execvp: a path with a slash, or a name on $PATH.
bool executable_found(const std::string& program, const std::string& path_var) {
  auto executable = [](const std::string& file) {
    return ::access(file.c_str(), X_OK) == 0 && !std::filesystem::is_directory(file);
  };
  if (program.find('/') != std::string::npos) return executable(program);
  std::stringstream dirs(path_var);
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (executable((dir.empty() ? "." : dir) + "/" + program)) return true;
  return false;
}

// Why the launcher cannot run, or "" when it can.
std::string launcher_problem(const LaunchPlan& plan, const LaunchOptions& options,
                             const LaunchFacts& facts) {
  const std::string& program = plan.argv[0];
  auto path = facts.env.find("PATH");
  if (executable_found(program, path == facts.env.end() ? "" : path->second)) return "";
  if (program == "srun" && !options.mpirun)
    return "srun: not found on PATH inside a Slurm job (pass --hosts or --hostfile to use "
           "mpirun)";
  if (!options.mpirun) return "mpirun: not found on PATH (install openmpi-bin or pass --mpirun)";
  if (program.find('/') != std::string::npos)
    return program + ": not an executable file (--mpirun)";
  return program + ": not found on PATH (--mpirun)";
}

// What launch says when the launched job was interrupted and no rank said it (supervise.h):
// for train, from what its --checkpoint-dir (made absolute as the ranks get it) holds once
// the job has ended: a checkpoint to resume from, or nothing to resume; nothing for others.
std::function<std::string()> launched_interrupt_notice(const LaunchCommand& command,
                                                       const std::string& cwd) {
  if (command.subcommand != "train") return {};
  const std::string dir = command.checkpoint_dir ? absolute_dir(*command.checkpoint_dir, cwd) : "";
  return [dir] {
    InterruptState state;  // how far the job got is the ranks' to say
    state.checkpoint_dir = dir;
    state.checkpoint_epoch = latest_checkpoint_epochs(dir);
    return interrupt_message(state);
  };
}

// Throws UsageError when `words` (the command after --, which names `command`) would not
// parse; a launch flag given after the command is named as such.
void check_command_flags(const CLI::App& launch, const LaunchCommand& command,
                         const std::vector<std::string>& words) {
  const std::string problem = check_arguments(words);
  if (problem.empty()) return;
  for (size_t i = command_index(words) + 1; i < words.size(); ++i) {
    const std::string name = words[i].substr(0, words[i].find('='));
    // -q/-v and --help belong to every command, launch's included.
    if (name.rfind("--", 0) != 0 || name == "--help" || is_global_flag(name)) continue;
    PARTITA_CHECK(launch.get_option_no_throw(name) == nullptr, UsageError,
                  "{}: a flag of launch, given after the command (where it belongs to {}); put "
                  "launch's flags before --",
                  name, command.subcommand);
  }
  throw UsageError(problem);
}

int run_launch(const Flags& flags, const CLI::App& app) {
  LaunchOptions options = flags.options;
  if (app.count("--procs-per-host") > 0) options.procs_per_host = flags.procs_per_host;
  if (app.count("--mpirun") > 0) options.mpirun = flags.mpirun;
  if (app.count("--cores-per-host") > 0) options.cores_per_host = flags.cores_per_host;
  if (app.count("--bind") > 0) options.bind = parse_bind(flags.bind);
  if (app.count("--torch-threads") > 0) options.torch_threads = flags.torch_threads;
  if (app.count("--threads") > 0) options.sampler_threads = flags.sampler_threads;
  PARTITA_CHECK(flags.teardown_timeout > 0, UsageError,
                "--teardown-timeout: must be > 0 seconds, got {}", flags.teardown_timeout);
  options.unparsed = app.remaining();

  LaunchFacts facts;
  facts.env = environment();
  facts.partita_binary = self_binary();
  facts.cwd = std::filesystem::current_path().string();
  facts.log_level = log_level();
  facts.host_cores = usable_cores();
  facts.host_sockets = usable_sockets();
  facts.affinity_restricted = affinity_narrower_than_cpuset();
  facts.stderr_is_terminal = ::isatty(STDERR_FILENO) == 1;
  if (!options.hostfile.empty()) read_hostfile(options.hostfile, facts);
  std::optional<LaunchCommand> command;
  try {
    command = check_command(options.command);
  } catch (const UsageError&) {
    // plan_launch reports it, after the problems it checks first.
  }
  if (command && !command->program.empty()) {
    auto path = facts.env.find("PATH");
    facts.program_found =
        executable_found(command->program, path == facts.env.end() ? "" : path->second);
  }
  if (command && command->parts_dir) {
    try {
      facts.parts = partition::read_meta(*command->parts_dir).num_parts;
    } catch (const Error& e) {
      facts.parts_error = error_text(e);
    }
  }

  const LaunchPlan plan = plan_launch(options, facts);  // throws unless `command` was checked
  // The ranks would refuse a bad flag of the command the same way, each after MPI started:
  // say it now, once. A program's arguments are its own.
  if (command->program.empty()) check_command_flags(app, *command, options.command);
  for (const std::string& line : plan.warnings) log_warning("{}", line);
  const std::string problem = launcher_problem(plan, options, facts);
  PARTITA_CHECK(problem.empty() || options.dry_run, Error, "{}", problem);
  if (!problem.empty()) log_warning("{}", problem);
  log_info("{}", plan.layout_line);
  for (const std::string& line : plan.notes) log_info("{}", line);
  const std::string line = shell_join(plan.argv);
  if (options.dry_run) {
    std::printf("%s\n", line.c_str());
    return 0;
  }
  log_info("launch: {}", line);
  return supervise(plan, flags.teardown_timeout, launched_interrupt_notice(*command, facts.cwd));
}

}  // namespace

Action add_launch_command(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  app.description(kDescription);
  app.footer(kFooter);
  app.allow_extras();  // unknown flags reach plan_launch, which explains them
  app.add_option("--hosts", flags->options.hosts,
                 "Comma-separated host names; each runs --procs-per-host ranks")
      ->type_name("H1,H2,...");
  app.add_option("--hostfile", flags->options.hostfile,
                 "Open MPI hostfile: one host per line, optional slots=N, # comments")
      ->type_name("FILE");
  app.add_option("--procs-per-host", flags->procs_per_host,
                 "Ranks per host. Default: the parts of --parts spread evenly over the hosts; "
                 "for a 1-part directory the layout rule's (one per socket); 1 without --parts")
      ->type_name("N");
  app.add_flag("--oversubscribe", flags->options.oversubscribe,
               "Allow more ranks on a host than its slots or cores (mpirun --oversubscribe, "
               "srun --overcommit). Not needed with --hosts or on this host alone: they give "
               "each host procs-per-host slots");
  app.add_option("--mpirun", flags->mpirun,
                 "The mpirun to run (default: mpirun on PATH); inside Slurm, mpirun instead "
                 "of srun")
      ->type_name("PATH");
  app.add_option("--env", flags->options.env,
                 "Forward this environment variable to the ranks too (mpirun -x); repeatable or "
                 "comma-separated")
      ->type_name("NAME")
      ->allow_extra_args(false)
      ->delimiter(',');
  app.add_option("--bind", flags->bind,
                 "Pin ranks: core (each rank its share of a host's cores), socket or none. "
                 "Default: core when a host has at least procs-per-host cores, else none")
      ->type_name("core|socket|none");
  app.add_option("--cores-per-host", flags->cores_per_host,
                 "Cores of each host, for binding (default: this host's usable cores)")
      ->type_name("N");
  app.add_option("--torch-threads", flags->torch_threads,
                 "Torch (kernel) threads per rank. Default: the layout rule's (the rank's "
                 "cores, for train less the sampler threads on more than 4); passed as the "
                 "command's --torch-threads, or OMP_NUM_THREADS for a program")
      ->type_name("N");
  app.add_option("--threads", flags->sampler_threads,
                 "Sampler threads per rank (partition, generate: worker threads). Default: "
                 "one per 8 cores of a rank, 1 to 4 (partition, generate: the rank's cores); "
                 "passed as the command's --threads")
      ->type_name("N");
  app.add_option("--teardown-timeout", flags->teardown_timeout,
                 "Seconds mpirun may take to exit after the job failed or launch was told to "
                 "stop; then launch kills it and what it started here, and exits 1")
      ->type_name("S")
      ->capture_default_str();
  app.add_flag("--dry-run", flags->options.dry_run,
               "Print the command as one shell line on stdout instead of running it");
  app.add_option("command", flags->options.command,
                 "After --: train, infer, sample-bench, partition or generate and its flags, or "
                 "a program and its arguments (python3 script.py ...), run on every rank")
      ->type_name("ARGS");
  return [flags, &app] { return run_launch(*flags, app); };
}

}  // namespace partita::cli
