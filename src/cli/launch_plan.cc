#include "launch_plan.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>

#include "global_flags.h"
#include "partita/core/error.h"

namespace partita::cli {
namespace {

// The subcommand that makes no sense on several ranks at once (info only reads and prints).
bool is_local_command(const std::string& word) { return word == "info"; }

// The launchable subcommands, for messages (launchable_commands()).
constexpr const char* kLaunchable = "train, infer, sample-bench, partition, generate";

bool is_env_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Parses a positive int; nullopt for anything else.
std::optional<int> parse_positive(const std::string& text) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || v < 1 || v > 1'000'000) return std::nullopt;
  return static_cast<int>(v);
}

std::string lookup(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

// Where the ranks run. kLocal is kHosts with the single host "localhost".
enum class Mode { kLocal, kHosts, kHostfile, kSlurmSrun, kSlurmMpirun };

// Flags of the launched command whose value is a path: made absolute against the launcher's
// directory, since a remote rank may not start there (Open MPI falls back to $HOME when it
// is missing on that host), and rank 0 may not run on the launcher's host. A program's
// flags are its own business, but for --parts, which launch reads too.
std::vector<std::string> path_flags(const LaunchCommand& command) {
  if (!command.program.empty()) return {"--parts"};
  std::vector<std::string> flags{"--parts", "--checkpoint-dir", "--metrics-out"};
  if (command.subcommand == "infer") flags.push_back("--out");  // written by rank 0
  if (command.subcommand == "partition") {                      // read and written by every rank
    flags.push_back("--dataset");
    flags.push_back("--out");
  }
  if (command.subcommand == "generate") flags.push_back("--out");  // each rank its chunks
  return flags;
}

// Whether `program` is a Python interpreter (python, python3, python3.11, /usr/bin/python3).
bool is_python(const std::string& program) {
  const std::string name = std::filesystem::path(program).filename().string();
  return name.rfind("python", 0) == 0 &&
         name.find_first_not_of("0123456789.", 6) == std::string::npos;
}

// The index in `args` (a Python interpreter's arguments) of the script it runs, or
// args.size() when it runs none (-c, -m, or stdin).
size_t python_script_index(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-c" || a == "-m" || a == "-" || a == "--") return args.size();
    if (a == "-W" || a == "-X" || a == "--check-hash-based-pycs") {
      ++i;  // its value follows
      continue;
    }
    if (a.empty() || a[0] != '-') return i;
  }
  return args.size();
}

// `command` with the relative values of the path flags of `checked` made absolute against
// `cwd`; for a program, also the program when it is a relative path (./run.sh), and the
// script a Python interpreter runs.
std::vector<std::string> absolutize_paths(std::vector<std::string> command,
                                          const LaunchCommand& checked, const std::string& cwd) {
  const std::vector<std::string> flags = path_flags(checked);
  const size_t first = command_index(command);
  if (!checked.program.empty()) {
    if (command[0].find('/') != std::string::npos) command[0] = absolute_dir(command[0], cwd);
    if (is_python(command[0])) {
      const std::vector<std::string> args(command.begin() + 1, command.end());
      const size_t script = python_script_index(args);
      if (script < args.size()) command[script + 1] = absolute_dir(args[script], cwd);
    }
  }
  for (size_t i = first + 1; i < command.size(); ++i) {
    for (const std::string& flag : flags) {
      if (command[i] == flag && i + 1 < command.size()) {
        command[i + 1] = absolute_dir(command[i + 1], cwd);
        ++i;
        break;
      }
      if (command[i].rfind(flag + "=", 0) == 0) {
        command[i] = flag + "=" + absolute_dir(command[i].substr(flag.size() + 1), cwd);
        break;
      }
    }
  }
  return command;
}

// What the command's ranks run, for their threads (launch_layout.h).
Workload workload_of(const LaunchCommand& command) {
  if (command.subcommand == "train") return Workload::kTrain;
  if (command.subcommand == "infer") return Workload::kInfer;
  if (command.subcommand == "sample-bench") return Workload::kSampleBench;
  if (command.subcommand == "partition" || command.subcommand == "generate")
    return Workload::kWorkers;
  return Workload::kProgram;
}

// The values of `flags` given in `command` after its subcommand (`--flag V` or `--flag=V`),
// in order; a value that is not a number is left to the command to reject (-1).
std::vector<std::pair<std::string, int>> given_flag_values(const std::vector<std::string>& command,
                                                           const std::vector<std::string>& flags) {
  std::vector<std::pair<std::string, int>> out;
  if (flags.empty()) return out;
  auto number = [](const std::string& word) {
    const std::optional<int> n = parse_positive(word);
    return n ? *n : (word == "0" ? 0 : -1);
  };
  for (size_t i = command_index(command) + 1; i < command.size(); ++i) {
    for (const std::string& flag : flags) {
      if (command[i] == flag)
        out.emplace_back(flag, i + 1 < command.size() ? number(command[i + 1]) : -1);
      else if (command[i].rfind(flag + "=", 0) == 0)
        out.emplace_back(flag, number(command[i].substr(flag.size() + 1)));
    }
  }
  return out;
}

// The end of the layout line: how the ranks match the partition, and the --num-parts the
// rule's layout needs when it is not the one run.
std::string parts_clause(const LaunchPlan& plan, const LaunchFacts& facts, int hosts) {
  const Layout& layout = plan.layout;
  const int rule_ranks = layout.rule_ranks_per_host * hosts;
  const bool rule_known = layout.cores > 0;
  if (facts.parts == 1)
    return plan.ranks > 1 ? "; replicated 1-part mode: every rank holds the whole graph"
                          : "; 1 part, 1 rank";
  if (facts.parts < 1)
    return rule_known && rule_ranks != plan.ranks
               ? fmt::format(
                     "; no partition given: the rule's layout runs {} rank{} per host "
                     "(--procs-per-host {}, with a {}-part or a 1-part directory)",
                     layout.rule_ranks_per_host, layout.rule_ranks_per_host == 1 ? "" : "s",
                     layout.rule_ranks_per_host, rule_ranks)
               : "; no partition given";
  std::string clause = fmt::format("; one rank per part (--num-parts {})", facts.parts);
  // More ranks than the rule's are for a graph one rank's memory cannot hold.
  if (rule_known && rule_ranks != plan.ranks && rule_ranks == 1)
    clause +=
        "; the rule's layout runs 1 rank: use a 1-part directory, unless one rank "
        "cannot hold the graph";
  else if (rule_known && rule_ranks != plan.ranks)
    clause += fmt::format(
        "; the rule's layout runs {} ranks: partition with --num-parts {}, or use a 1-part "
        "directory (replicated mode)",
        rule_ranks, rule_ranks);
  return clause;
}

// mpirun's mapping and binding flags for `ppn` ranks per host; see LaunchOptions::bind.
// Empty when neither --bind nor the host's cores are known (Open MPI's defaults then).
std::vector<std::string> binding_flags(const LaunchOptions& options, const LaunchFacts& facts,
                                       int ppn, bool srun, bool local) {
  const int cores = options.cores_per_host.value_or(facts.host_cores);
  const int sockets = std::max(facts.host_sockets, 1);
  std::optional<Bind> bind = options.bind;
  // Inside Slurm the allocation and its task/affinity plugin decide unless told otherwise.
  if (!bind && cores > 0 && !srun) bind = ppn <= cores ? Bind::kCore : Bind::kNone;
  // Under taskset, mpirun's binding would leave launch's CPUs: the ranks inherit them.
  if (!options.bind && local && !srun && facts.affinity_restricted) bind = Bind::kNone;
  if (!bind) return {};
  PARTITA_CHECK(*bind != Bind::kCore || srun || cores < 1 || ppn <= cores, UsageError,
                "--bind core: {} ranks per host but {} cores per host (pass --bind none, or "
                "--cores-per-host N if the hosts have more cores than this one)",
                ppn, cores);
  const std::string per_node = "ppr:" + std::to_string(ppn) + ":node";
  const std::string pe = cores > 0 ? std::to_string(cores / ppn) : "";
  switch (*bind) {
    case Bind::kCore:
      if (srun) return {"--cpu-bind=cores"};  // Slurm divides the allocation's CPUs
      // Several sockets: the same number of ranks on each, so that none spans two.
      if (sockets > 1 && ppn % sockets == 0 && !pe.empty() && cores % sockets == 0)
        return {"--map-by",
                "ppr:" + std::to_string(ppn / sockets) +
                    ":socket:PE=" + std::to_string(cores / sockets / (ppn / sockets)),
                "--bind-to", "core"};
      return {"--map-by", pe.empty() ? per_node : per_node + ":PE=" + pe, "--bind-to", "core"};
    case Bind::kSocket:
      if (srun) return {"--cpu-bind=sockets"};
      return {"--map-by", per_node, "--bind-to", "socket"};
    case Bind::kNone:
      if (srun) return {"--cpu-bind=none"};
      return {"--map-by", per_node, "--bind-to", "none"};
  }
  return {};
}

// "rank N" mentions in `line`, in order.
std::vector<int> mentioned_ranks(const std::string& line) {
  std::vector<int> ranks;
  for (size_t at = line.find("rank "); at != std::string::npos; at = line.find("rank ", at + 5)) {
    size_t end = at + 5;
    while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
    if (end == at + 5 || end - at > 14) continue;
    ranks.push_back(std::stoi(line.substr(at + 5, end - at - 5)));
  }
  return ranks;
}

// Unknown flags: most likely the launched command's flags given without `--` before them.
void check_unparsed(const LaunchOptions& options) {
  std::string unknown;
  bool separator = false;
  for (const std::string& word : options.unparsed) {
    if (word == "--")
      separator = true;
    else
      unknown += (unknown.empty() ? "" : " ") + word;
  }
  if (unknown.empty()) return;
  const auto& ok = launchable_commands();
  const bool command_first =
      !options.command.empty() && std::find(ok.begin(), ok.end(), options.command[0]) != ok.end();
  PARTITA_CHECK(separator || !command_first, UsageError,
                "launch: put -- before the command to launch (partita launch [options] -- {} "
                "...); not a launch flag: {}",
                options.command.empty() ? "" : options.command[0], unknown);
  throw UsageError(
      fmt::format("launch: unknown flag{} {} (the command to launch goes after --; "
                  "see partita launch --help)",
                  unknown.find(' ') == std::string::npos ? "" : "s", unknown));
}

}  // namespace

std::string absolute_dir(const std::string& dir, const std::string& cwd) {
  if (dir.empty() || dir[0] == '/') return dir;
  return (std::filesystem::path(cwd) / dir).lexically_normal().string();
}

Bind parse_bind(const std::string& word) {
  if (word == "core") return Bind::kCore;
  if (word == "socket") return Bind::kSocket;
  if (word == "none") return Bind::kNone;
  throw UsageError(fmt::format("--bind: '{}' is not core, socket or none", word));
}

const std::vector<std::string>& launchable_commands() {
  // Keep in step with the subcommands that run under MPI (through runtime::run_mpi_ranks).
  static const std::vector<std::string> commands{"train", "infer", "sample-bench", "partition",
                                                 "generate"};
  return commands;
}

LaunchCommand check_command(const std::vector<std::string>& command) {
  const size_t i = command_index(command);
  PARTITA_CHECK(i < command.size(), UsageError,
                "launch: nothing to launch (put the command after --, e.g. "
                "partita launch -- train --parts DIR)");
  const std::string& word = command[i];
  PARTITA_CHECK(word != "launch", UsageError,
                "launch: cannot launch `launch` itself; give {} or a program after --",
                kLaunchable);
  PARTITA_CHECK(!is_local_command(word), UsageError,
                "launch: '{}' is not a distributed command; launch runs {} or a program "
                "(run `partita {}` directly)",
                word, kLaunchable, word);
  PARTITA_CHECK(word.empty() || word[0] != '-', UsageError,
                "launch: '{}' before the command; only -q/--quiet/-v/--verbose may come "
                "before {}",
                word, kLaunchable);
  const auto& ok = launchable_commands();
  const bool partita_command = std::find(ok.begin(), ok.end(), word) != ok.end();
  PARTITA_CHECK(partita_command || i == 0, UsageError,
                "launch: '{}' is not a partita command ({}), and -q/-v before a program are "
                "partita's",
                word, kLaunchable);
  LaunchCommand result;
  if (!partita_command) {
    // Another program: its arguments are its own; only --parts tells the ranks.
    result.program = word;
    for (size_t j = 1; j < command.size(); ++j) {
      if (command[j] == "--parts" && j + 1 < command.size()) result.parts_dir = command[j + 1];
      if (command[j].rfind("--parts=", 0) == 0) result.parts_dir = command[j].substr(8);
    }
    return result;
  }
  result.subcommand = word;
  for (size_t j = i + 1; j < command.size(); ++j) {
    // The value of `flag` at word j (--flag VALUE, which moves j on, or --flag=VALUE).
    auto value_of = [&](const std::string& flag) -> std::optional<std::string> {
      if (command[j] == flag) {
        PARTITA_CHECK(j + 1 < command.size(), UsageError, "launch: {} needs a value", flag);
        return command[++j];
      }
      if (command[j].rfind(flag + "=", 0) == 0) return command[j].substr(flag.size() + 1);
      return std::nullopt;
    };
    if (std::optional<std::string> dir = value_of("--parts")) {
      result.parts_dir = std::move(dir);
    } else if (std::optional<std::string> dir = value_of("--checkpoint-dir")) {
      result.checkpoint_dir = std::move(dir);
    } else if (std::optional<std::string> device = value_of("--device")) {
      result.device = std::move(device);
    } else if (std::optional<std::string> topology = value_of("--topology")) {
      result.topology = std::move(topology);
    } else if (std::optional<std::string> servers =
                   word == "infer" ? std::nullopt : value_of("--servers")) {  // infer has none
      const std::string& value = *servers;
      PARTITA_CHECK(!value.empty() && value.size() <= 9 &&
                        value.find_first_not_of("0123456789") == std::string::npos &&
                        (value == "0" || value[0] != '0'),
                    UsageError, "--servers: '{}' is not a count of server ranks", value);
      result.servers = std::stoi(value);
    }
  }
  return result;
}

std::vector<std::string> parse_hosts(const std::string& list) {
  std::vector<std::string> hosts;
  std::stringstream in(list);
  std::string host;
  while (std::getline(in, host, ',')) hosts.push_back(host);
  if (!list.empty() && list.back() == ',') hosts.emplace_back();  // getline drops it
  for (const std::string& h : hosts) {
    PARTITA_CHECK(!h.empty(), UsageError, "--hosts: empty host name in '{}'", list);
    PARTITA_CHECK(h.find(':') == std::string::npos, UsageError,
                  "--hosts: '{}': give bare host names and the ranks per host with "
                  "--procs-per-host",
                  h);
    PARTITA_CHECK(std::none_of(h.begin(), h.end(),
                               [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
                  UsageError, "--hosts: '{}' is not a host name", h);
    PARTITA_CHECK(std::count(hosts.begin(), hosts.end(), h) == 1, UsageError,
                  "--hosts: '{}' listed twice", h);
  }
  return hosts;
}

std::vector<HostfileEntry> parse_hostfile(const std::string& text, const std::string& path) {
  std::vector<HostfileEntry> entries;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    HostfileEntry entry;
    entry.line = number;
    if (!(words >> entry.host)) continue;  // blank or comment
    for (std::string field; words >> field;) {
      if (field.rfind("slots=", 0) != 0) continue;  // max_slots=, etc.: Open MPI's business
      std::optional<int> slots = parse_positive(field.substr(6));
      PARTITA_CHECK(slots.has_value(), FormatError, "{}:{}: bad slots value '{}'", path, number,
                    field.substr(6));
      entry.slots = *slots;
    }
    for (const HostfileEntry& e : entries)
      PARTITA_CHECK(e.host != entry.host, FormatError, "{}:{}: host '{}' already listed on line {}",
                    path, number, entry.host, e.line);
    entries.push_back(entry);
  }
  PARTITA_CHECK(!entries.empty(), FormatError, "{}: lists no hosts", path);
  return entries;
}

LaunchPlan plan_launch(const LaunchOptions& options, const LaunchFacts& facts) {
  LaunchPlan plan;
  PARTITA_CHECK(facts.env.count("OMPI_COMM_WORLD_SIZE") == 0, Error,
                "launch: already inside an MPI job (OMPI_COMM_WORLD_SIZE is set); run the "
                "command without launch");
  check_unparsed(options);
  const LaunchCommand command = check_command(options.command);
  const bool program = !command.program.empty();
  if (program && !facts.program_found) {
    // A bare name is most likely a misspelled command; a path, a missing file.
    const bool path = command.program.find('/') != std::string::npos;
    const std::string problem =
        path ? fmt::format("launch: {}: not an executable file", command.program)
             : fmt::format("launch: '{}' is neither a partita command ({}) nor a program on PATH",
                           command.program, kLaunchable);
    if (!options.dry_run) {
      if (path) throw Error(problem);
      throw UsageError(problem);
    }
    plan.warnings.push_back(problem);
  }
  // What needs one rank per part, for messages: the command, or the program.
  const std::string runs = program ? command.program : command.subcommand;
  PARTITA_CHECK(options.hosts.empty() || options.hostfile.empty(), UsageError,
                "--hosts and --hostfile: give one or the other");
  PARTITA_CHECK(!options.procs_per_host || *options.procs_per_host >= 1, UsageError,
                "--procs-per-host: must be >= 1, got {}", options.procs_per_host.value_or(0));
  PARTITA_CHECK(!options.mpirun || !options.mpirun->empty(), UsageError, "--mpirun: empty path");
  PARTITA_CHECK(!options.cores_per_host || *options.cores_per_host >= 1, UsageError,
                "--cores-per-host: must be >= 1, got {}", options.cores_per_host.value_or(0));
  PARTITA_CHECK(!options.torch_threads || *options.torch_threads >= 1, UsageError,
                "--torch-threads: must be >= 1, got {}", options.torch_threads.value_or(0));
  PARTITA_CHECK(!options.sampler_threads || *options.sampler_threads >= 1, UsageError,
                "--threads: must be >= 1, got {}", options.sampler_threads.value_or(0));
  for (const std::string& name : options.env) {
    PARTITA_CHECK(is_env_name(name), UsageError,
                  "--env: '{}' is not a variable name (set the value in the environment)", name);
    PARTITA_CHECK(facts.env.count(name) == 1, UsageError, "--env: {} is not set", name);
  }

  // Where the ranks go: mode, and how many hosts.
  Mode mode = Mode::kLocal;
  std::vector<std::string> hosts{"localhost"};
  std::vector<HostfileEntry> hostfile;
  int num_hosts = 1;
  const std::string slurm_job = lookup(facts.env, "SLURM_JOB_ID");
  if (!options.hosts.empty()) {
    hosts = parse_hosts(options.hosts);
    mode = hosts == std::vector<std::string>{"localhost"} ? Mode::kLocal : Mode::kHosts;
    num_hosts = static_cast<int>(hosts.size());
  } else if (!options.hostfile.empty()) {
    PARTITA_CHECK(facts.hostfile_text.has_value(), IoError, "{}: cannot read hostfile ({})",
                  options.hostfile, facts.hostfile_error);
    hostfile = parse_hostfile(*facts.hostfile_text, options.hostfile);
    mode = Mode::kHostfile;
    num_hosts = static_cast<int>(hostfile.size());
  } else if (!slurm_job.empty()) {
    mode = options.mpirun ? Mode::kSlurmMpirun : Mode::kSlurmSrun;
    std::string nodes = lookup(facts.env, "SLURM_JOB_NUM_NODES");
    if (nodes.empty()) nodes = lookup(facts.env, "SLURM_NNODES");
    std::optional<int> n = parse_positive(nodes);
    PARTITA_CHECK(n.has_value(), Error,
                  "SLURM_JOB_NUM_NODES: '{}' is not a node count in Slurm job {}; pass --hosts "
                  "or --hostfile",
                  nodes, slurm_job);
    num_hosts = *n;
  }

  // The partition: its part count fixes the number of ranks.
  std::string parts_dir;
  if (command.parts_dir) {
    parts_dir = absolute_dir(*command.parts_dir, facts.cwd);
    if (facts.parts < 1) {
      const std::string problem = facts.parts_error.empty()
                                      ? parts_dir + ": cannot read the partition directory"
                                      : facts.parts_error;
      // A program's --parts may mean something else: then the ranks are --procs-per-host.
      PARTITA_CHECK(options.dry_run || program, Error, "{}", problem);
      plan.warnings.push_back(
          program ? fmt::format("{} (the --parts of {}: ranks from --procs-per-host)", problem,
                                command.program)
                  : problem);
    }
  }
  // The layout: ranks per host (from --procs-per-host, the parts, or for a 1-part
  // directory the rule) and threads per rank (launch_layout.h).
  LayoutRequest request;
  // Under srun the allocation decides the cores: unknown unless --cores-per-host says.
  request.cores = options.cores_per_host.value_or(mode == Mode::kSlurmSrun ? 0 : facts.host_cores);
  request.sockets = facts.host_sockets;
  request.hosts = num_hosts;
  request.parts = facts.parts;
  request.ranks_per_host = options.procs_per_host;
  request.workload = workload_of(command);
  const std::vector<std::string> threads_flags = thread_flag_names(request.workload);
  request.torch_threads = options.torch_threads;
  request.threads = options.sampler_threads;
  // The command's own thread flags win over launch's, and the layout says so.
  for (const auto& [flag, value] : given_flag_values(options.command, threads_flags)) {
    if (flag == "--torch-threads") request.torch_threads = value;
    if (flag == "--threads") request.threads = value;
  }
  int ppn = 1;
  // Server-client mode (`--servers P`): P servers plus the trainers, so the rank count is
  // the user's choice (hosts x --procs-per-host) and must exceed the parts.
  const bool servers = command.servers > 0;
  PARTITA_CHECK(!servers || options.procs_per_host, UsageError,
                "launch: with --servers, give --procs-per-host: the ranks per host, servers and "
                "trainers together (the first {} ranks serve)",
                command.servers);
  if (options.procs_per_host) {
    ppn = *options.procs_per_host;
  } else if (facts.parts > 1) {
    PARTITA_CHECK(facts.parts % num_hosts == 0, UsageError,
                  "launch: {} has {} parts, which cannot be spread evenly over {} hosts (each "
                  "host runs the same number of ranks, one per part); repartition into a "
                  "multiple of {} parts",
                  parts_dir, facts.parts, num_hosts, num_hosts);
    ppn = facts.parts / num_hosts;
  }
  plan.layout = choose_layout(request);
  if (!options.procs_per_host && facts.parts == 1) {
    // The rule's ranks, but no more than the fewest slots a hostfile gives a host.
    int slots = 0;
    for (const HostfileEntry& e : hostfile)
      if (e.slots > 0) slots = slots == 0 ? e.slots : std::min(slots, e.slots);
    if (slots > 0 && plan.layout.ranks_per_host > slots && !options.oversubscribe) {
      request.ranks_per_host = slots;
      plan.layout = choose_layout(request);
      plan.layout.ranks_from = "rule, capped by the hostfile's slots";
    }
    ppn = plan.layout.ranks_per_host;
  }
  plan.layout.ranks_per_host = ppn;
  plan.ranks = num_hosts * ppn;
  plan.layout_line = describe_layout(plan.layout, num_hosts) + parts_clause(plan, facts, num_hosts);
  if (servers && facts.parts > 1) {
    PARTITA_CHECK(command.servers == facts.parts, UsageError,
                  "launch: --servers {}: {} has {} parts, one server per part", command.servers,
                  parts_dir, facts.parts);
    PARTITA_CHECK(plan.ranks > facts.parts, UsageError,
                  "launch: {} host{} x {} procs-per-host = {} ranks leaves no rank to train "
                  "beside the {} servers",
                  num_hosts, num_hosts == 1 ? "" : "s", ppn, plan.ranks, facts.parts);
  }
  PARTITA_CHECK(servers || facts.parts <= 1 || plan.ranks == facts.parts, UsageError,
                "launch: {} has {} parts but {} host{} x {} procs-per-host = {} ranks; {} "
                "needs one rank per part (or a 1-part directory)",
                parts_dir, facts.parts, num_hosts, num_hosts == 1 ? "" : "s", ppn, plan.ranks,
                runs);
  if (!options.oversubscribe) {
    for (const HostfileEntry& e : hostfile)
      PARTITA_CHECK(e.slots == 0 || e.slots >= ppn, UsageError,
                    "{}:{}: host '{}' has slots={}, fewer than --procs-per-host {} (raise "
                    "slots or pass --oversubscribe)",
                    options.hostfile, e.line, e.host, e.slots, ppn);
  }

  // The launcher and its placement flags.
  std::vector<std::string>& argv = plan.argv;
  const std::string n = std::to_string(plan.ranks);
  const std::string per_node = "ppr:" + std::to_string(ppn) + ":node";
  const std::vector<std::string> binding =
      binding_flags(options, facts, ppn, /*srun=*/mode == Mode::kSlurmSrun,
                    /*local=*/mode == Mode::kLocal);
  // A program gets the layout's torch threads as OMP_NUM_THREADS (torch reads it), unless
  // the variable is set.
  if (program && plan.layout.torch_threads > 0 && facts.env.count("OMP_NUM_THREADS") == 0)
    plan.env["OMP_NUM_THREADS"] = std::to_string(plan.layout.torch_threads);
  // A terminal on launch's stderr: the ranks' stderr is a pipe to mpirun, so tell them.
  if (facts.stderr_is_terminal && facts.env.count("PARTITA_PROGRESS") == 0)
    plan.env["PARTITA_PROGRESS"] = "bar";
  if (mode == Mode::kSlurmSrun) {
    argv = {"srun", "--nodes=" + std::to_string(num_hosts), "--ntasks=" + n,
            "--ntasks-per-node=" + std::to_string(ppn)};
    if (options.oversubscribe) argv.push_back("--overcommit");
    argv.insert(argv.end(), binding.begin(), binding.end());
  } else {
    argv = {options.mpirun.value_or("mpirun"), "-np", n};
    if (mode == Mode::kLocal || mode == Mode::kHosts) {
      // host:N gives each host exactly N slots; the default by-slot mapping fills them.
      std::string list;
      for (const std::string& h : hosts)
        list += (list.empty() ? "" : ",") + h + ":" + std::to_string(ppn);
      argv.insert(argv.end(), {"--host", list});
    } else if (mode == Mode::kHostfile) {
      argv.insert(argv.end(), {"--hostfile", options.hostfile});
      if (binding.empty()) argv.insert(argv.end(), {"--map-by", per_node});
    } else if (binding.empty()) {  // kSlurmMpirun: Open MPI reads the hosts from Slurm
      argv.insert(argv.end(), {"--map-by", per_node});
    }
    if (options.oversubscribe) argv.push_back("--oversubscribe");
    argv.insert(argv.end(), binding.begin(), binding.end());
    if (mode != Mode::kLocal) {
      // Open MPI's daemons notice a silent peer (cut cable, dead host) only through TCP
      // keepalive on their out-of-band connections, by default after 300 + 9 x 20 s. These
      // make mpirun give up on an idle, unreachable daemon 30 to 40 s after it went silent
      // (docs/launch.md); a variable the user set (OMPI_MCA_...) wins.
      static const std::pair<const char*, const char*> kKeepalive[] = {
          {"oob_tcp_keepalive_time", "10"},
          {"oob_tcp_keepalive_intvl", "10"},
          {"oob_tcp_keepalive_probes", "3"}};
      for (const auto& [name, value] : kKeepalive)
        if (facts.env.count(std::string("OMPI_MCA_") + name) == 0)
          argv.insert(argv.end(), {"--mca", name, value});
    }
    std::set<std::string> forward(options.env.begin(), options.env.end());
    for (const auto& [name, value] : facts.env)
      if (name.rfind("PARTITA_", 0) == 0 || name == "OMP_NUM_THREADS" ||
          name == "OMPI_ALLOW_RUN_AS_ROOT" || name == "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM" ||
          (program && name == "PYTHONPATH"))  // where a script finds the partita package
        forward.insert(name);
    for (const auto& [name, value] : plan.env) forward.insert(name);
    for (const std::string& name : forward) argv.insert(argv.end(), {"-x", name});
  }
  if (mode == Mode::kLocal || mode == Mode::kHosts) {
    for (const std::string& h : hosts) plan.rank_hosts.insert(plan.rank_hosts.end(), ppn, h);
  } else if (mode == Mode::kHostfile) {
    for (const HostfileEntry& e : hostfile)
      plan.rank_hosts.insert(plan.rank_hosts.end(), ppn, e.host);
  }

  // The ranks' command: this binary, the launcher's -q/-v unless the command has its own;
  // or the program, as given but for relative paths.
  const std::vector<std::string> words = absolutize_paths(options.command, command, facts.cwd);
  if (!program) {
    argv.push_back(facts.partita_binary);
    if (command_index(options.command) == 0) {
      if (facts.log_level == LogLevel::kQuiet) argv.push_back("-q");
      if (facts.log_level == LogLevel::kDebug) argv.push_back("-v");
    }
  }
  argv.insert(argv.end(), words.begin(), words.end());
  // The layout's threads, as the command's flags it takes (not given there already).
  std::set<std::string> given;
  for (const auto& [flag, value] : given_flag_values(options.command, threads_flags))
    given.insert(flag);
  for (const auto& [flag, value] : layout_thread_flags(plan.layout))
    if (given.count(flag) == 0) argv.insert(argv.end(), {flag, std::to_string(value)});

  // One rank per GPU (train --device cuda) on a partitioned directory: every rank maps the
  // whole topology and samples on its GPU (docs/training.md, Topology), unless told.
  if (command.subcommand == "train" && command.device == std::string("cuda") && !command.topology &&
      facts.parts > 1) {
    argv.insert(argv.end(), {"--topology", "full"});
    plan.notes.push_back(
        "launch: --device cuda: every rank maps every part's in-edges (--topology full) and "
        "samples on its GPU; feature rows stay with their owners");
  }
  // --device: every rank gets the same command line and resolves its own GPU (device_flag.h).
  if (command.device && command.device->rfind("cuda", 0) == 0 && plan.layout.ranks_per_host > 1) {
    plan.notes.push_back(
        *command.device == "cuda"
            ? fmt::format("launch: --device cuda: the {} ranks of a host take its GPUs in blocks "
                          "by local rank (docs/launch.md, GPUs)",
                          plan.layout.ranks_per_host)
            : fmt::format("launch: --device {}: the {} ranks of a host share that one GPU",
                          *command.device, plan.layout.ranks_per_host));
  }
  if (mode != Mode::kLocal) {
    std::string shared = program ? words[0] : facts.partita_binary;
    if (program && is_python(words[0])) {
      const size_t script = python_script_index({words.begin() + 1, words.end()});
      if (script + 1 < words.size()) shared += ", " + words[script + 1];
    }
    plan.notes.push_back(
        fmt::format("launch: every host must see {}{}{} at the same path{}", shared,
                    parts_dir.empty() ? "" : " and the partition directory ", parts_dir,
                    parts_dir.empty() && shared.find(", ") == std::string::npos ? "" : "s"));
  }
  return plan;
}

bool replaces_failure_line(const std::string& kept, const std::string& line) {
  return kept.empty() || (line.rfind("error:", 0) == 0 && kept.rfind("error:", 0) != 0);
}

bool is_failure_line(const std::string& line) {
  // A rank's own report (the CLI's `error: ...`), and Open MPI's teardown banners.
  static const char* const kMarkers[] = {
      "mpirun noticed that process rank",
      "mpirun detected that one or more processes exited with non-zero status",
      "ORTE has lost communication with a remote daemon",
      "An ORTE daemon has unexpectedly failed",
      "MPI_ABORT was invoked",
  };
  if (line.rfind("error:", 0) == 0) return true;
  for (const char* marker : kMarkers)
    if (line.find(marker) != std::string::npos) return true;
  return false;
}

std::string stuck_message(const LaunchPlan& plan, const std::string& first_failure,
                          double waited_s) {
  const std::string head =
      first_failure.empty()
          ? fmt::format("launch: mpirun did not exit {:.0f} s after it was asked to stop", waited_s)
          : fmt::format("launch: the job failed but mpirun had not exited {:.0f} s later",
                        waited_s);
  std::vector<int> ranks = mentioned_ranks(first_failure);
  std::vector<std::string> lost;
  // The first mention is the reporting rank ("error: rank 0: rank 1 did not answer").
  const std::string reporter = !ranks.empty() && ranks[0] < static_cast<int>(plan.rank_hosts.size())
                                   ? plan.rank_hosts[ranks[0]]
                                   : std::string();
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i] < 0 || ranks[i] >= static_cast<int>(plan.rank_hosts.size())) continue;
    const std::string& host = plan.rank_hosts[ranks[i]];
    const std::string entry = fmt::format("{} (rank {})", host, ranks[i]);
    if (host != reporter && std::find(lost.begin(), lost.end(), entry) == lost.end())
      lost.push_back(entry);
  }
  std::string hosts;
  for (const std::string& entry : lost) hosts += (hosts.empty() ? "" : ", ") + entry;
  return head +
         (hosts.empty() ? std::string("; it could not reach a host")
                        : "; it could not reach host " + hosts) +
         "; killed mpirun and the processes it started here";
}

std::string shell_quote(const std::string& word) {
  const bool safe = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string("_@%+=:,./-").find(c) != std::string::npos;
  });
  if (safe) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) line += (line.empty() ? "" : " ") + shell_quote(word);
  return line;
}

}  // namespace partita::cli
