#include "launch_plan.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "global_flags.h"
#include "partita/core/error.h"

namespace partita::cli {
namespace {

bool is_env_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string lookup(const std::map<std::string, std::string>& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

// Where the ranks run. kLocal is kHosts with the single host "localhost".
enum class Mode { kLocal, kHosts, kHostfile, kSlurmSrun, kSlurmMpirun };

// Where the ranks go (plan_launch's hosts step).
struct Hosts {
  Mode mode = Mode::kLocal;
  std::vector<std::string> names{"localhost"};  // --hosts, or this host alone
  std::vector<HostfileEntry> hostfile;          // the --hostfile's lines (kHostfile)
  int count = 1;                                // hosts the ranks are spread over
};

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

// The request: what can be refused before looking at hosts or the partition (flags out of
// range, a command that is not launchable, a program that cannot be found). Returns the
// checked command; with --dry-run, a program not found is only a warning.
LaunchCommand check_request(const LaunchOptions& options, const LaunchFacts& facts,
                            LaunchPlan& plan) {
  PARTITA_CHECK(facts.env.count("OMPI_COMM_WORLD_SIZE") == 0, Error,
                "launch: already inside an MPI job (OMPI_COMM_WORLD_SIZE is set); run the "
                "command without launch");
  check_unparsed(options);
  LaunchCommand command = check_command(options.command);
  if (!command.program.empty() && !facts.program_found) {
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
  return command;
}

// The hosts: --hosts, the --hostfile's lines, or inside a Slurm job its nodes (srun, or
// mpirun with --mpirun); else this host alone.
Hosts find_hosts(const LaunchOptions& options, const LaunchFacts& facts) {
  Hosts hosts;
  const std::string slurm_job = lookup(facts.env, "SLURM_JOB_ID");
  if (!options.hosts.empty()) {
    hosts.names = parse_hosts(options.hosts);
    hosts.mode = hosts.names == std::vector<std::string>{"localhost"} ? Mode::kLocal : Mode::kHosts;
    hosts.count = static_cast<int>(hosts.names.size());
  } else if (!options.hostfile.empty()) {
    PARTITA_CHECK(facts.hostfile_text.has_value(), IoError, "{}: cannot read hostfile ({})",
                  options.hostfile, facts.hostfile_error);
    hosts.hostfile = parse_hostfile(*facts.hostfile_text, options.hostfile);
    hosts.mode = Mode::kHostfile;
    hosts.count = static_cast<int>(hosts.hostfile.size());
  } else if (!slurm_job.empty()) {
    hosts.mode = options.mpirun ? Mode::kSlurmMpirun : Mode::kSlurmSrun;
    std::string nodes = lookup(facts.env, "SLURM_JOB_NUM_NODES");
    if (nodes.empty()) nodes = lookup(facts.env, "SLURM_NNODES");
    std::optional<int> n = parse_positive(nodes);
    PARTITA_CHECK(n.has_value(), Error,
                  "SLURM_JOB_NUM_NODES: '{}' is not a node count in Slurm job {}; pass --hosts "
                  "or --hostfile",
                  nodes, slurm_job);
    hosts.count = *n;
  }
  return hosts;
}

// The partition: the command's --parts directory made absolute ("" without one). Its part
// count (LaunchFacts::parts) fixes the ranks; when it is unknown the plan fails, or with
// --dry-run, or for a program (whose --parts may mean something else), warns.
std::string find_parts(const LaunchOptions& options, const LaunchFacts& facts,
                       const LaunchCommand& command, LaunchPlan& plan) {
  if (!command.parts_dir) return "";
  const std::string parts_dir = absolute_dir(*command.parts_dir, facts.cwd);
  if (facts.parts < 1) {
    const bool program = !command.program.empty();
    const std::string problem = facts.parts_error.empty()
                                    ? parts_dir + ": cannot read the partition directory"
                                    : facts.parts_error;
    // A program's --parts may mean something else: then the ranks are --procs-per-host.
    PARTITA_CHECK(options.dry_run || program, Error, "{}", problem);
    plan.warnings.push_back(program
                                ? fmt::format("{} (the --parts of {}: ranks from --procs-per-host)",
                                              problem, command.program)
                                : problem);
  }
  return parts_dir;
}

// What the layout rule is asked (launch_layout.h): the hosts' cores and sockets, the parts,
// and the user's counts, the command's own thread flags winning over launch's.
LayoutRequest layout_request(const LaunchOptions& options, const LaunchFacts& facts,
                             const LaunchCommand& command, const Hosts& hosts) {
  LayoutRequest request;
  // Under srun the allocation decides the cores: unknown unless --cores-per-host says.
  request.cores =
      options.cores_per_host.value_or(hosts.mode == Mode::kSlurmSrun ? 0 : facts.host_cores);
  request.sockets = facts.host_sockets;
  request.hosts = hosts.count;
  request.parts = facts.parts;
  request.ranks_per_host = options.procs_per_host;
  request.workload = workload_of(command);
  request.torch_threads = options.torch_threads;
  request.threads = options.sampler_threads;
  // The command's own thread flags win over launch's, and the layout says so.
  for (const auto& [flag, value] :
       given_flag_values(options.command, thread_flag_names(request.workload))) {
    if (flag == "--torch-threads") request.torch_threads = value;
    if (flag == "--threads") request.threads = value;
  }
  return request;
}

// The ranks: ranks per host from --procs-per-host, the parts spread over the hosts, or (a
// 1-part directory) the rule's, capped by a hostfile's slots; the threads of each. Sets
// plan.layout, plan.ranks and plan.layout_line.
void choose_ranks(const LaunchOptions& options, const LaunchFacts& facts,
                  const LaunchCommand& command, const Hosts& hosts, const std::string& parts_dir,
                  LaunchPlan& plan) {
  LayoutRequest request = layout_request(options, facts, command, hosts);
  int ppn = 1;
  // Server-client mode (`--servers P`): P servers plus the trainers, so the rank count is
  // the user's choice (hosts x --procs-per-host) and must exceed the parts.
  PARTITA_CHECK(command.servers == 0 || options.procs_per_host, UsageError,
                "launch: with --servers, give --procs-per-host: the ranks per host, servers and "
                "trainers together (the first {} ranks serve)",
                command.servers);
  if (options.procs_per_host) {
    ppn = *options.procs_per_host;
  } else if (facts.parts > 1) {
    PARTITA_CHECK(facts.parts % hosts.count == 0, UsageError,
                  "launch: {} has {} parts, which cannot be spread evenly over {} hosts (each "
                  "host runs the same number of ranks, one per part); repartition into a "
                  "multiple of {} parts",
                  parts_dir, facts.parts, hosts.count, hosts.count);
    ppn = facts.parts / hosts.count;
  }
  plan.layout = choose_layout(request);
  if (!options.procs_per_host && facts.parts == 1) {
    // The rule's ranks, but no more than the fewest slots a hostfile gives a host.
    int slots = 0;
    for (const HostfileEntry& e : hosts.hostfile)
      if (e.slots > 0) slots = slots == 0 ? e.slots : std::min(slots, e.slots);
    if (slots > 0 && plan.layout.ranks_per_host > slots && !options.oversubscribe) {
      request.ranks_per_host = slots;
      plan.layout = choose_layout(request);
      plan.layout.ranks_from = "rule, capped by the hostfile's slots";
    }
    ppn = plan.layout.ranks_per_host;
  }
  plan.layout.ranks_per_host = ppn;
  plan.ranks = hosts.count * ppn;
  plan.layout_line =
      describe_layout(plan.layout, hosts.count) + parts_clause(plan, facts, hosts.count);
}

// The ranks checked against the partition (one per part, or the servers' count and room
// for trainers) and against the hostfile's slots.
void check_ranks(const LaunchOptions& options, const LaunchFacts& facts,
                 const LaunchCommand& command, const Hosts& hosts, const std::string& parts_dir,
                 const LaunchPlan& plan) {
  const int ppn = plan.layout.ranks_per_host;
  const bool servers = command.servers > 0;
  if (servers && facts.parts > 1) {
    PARTITA_CHECK(command.servers == facts.parts, UsageError,
                  "launch: --servers {}: {} has {} parts, one server per part", command.servers,
                  parts_dir, facts.parts);
    PARTITA_CHECK(plan.ranks > facts.parts, UsageError,
                  "launch: {} host{} x {} procs-per-host = {} ranks leaves no rank to train "
                  "beside the {} servers",
                  hosts.count, hosts.count == 1 ? "" : "s", ppn, plan.ranks, facts.parts);
  }
  // What needs one rank per part, for messages: the command, or the program.
  const std::string runs = command.program.empty() ? command.subcommand : command.program;
  PARTITA_CHECK(servers || facts.parts <= 1 || plan.ranks == facts.parts, UsageError,
                "launch: {} has {} parts but {} host{} x {} procs-per-host = {} ranks; {} "
                "needs one rank per part (or a 1-part directory)",
                parts_dir, facts.parts, hosts.count, hosts.count == 1 ? "" : "s", ppn, plan.ranks,
                runs);
  if (!options.oversubscribe) {
    for (const HostfileEntry& e : hosts.hostfile)
      PARTITA_CHECK(e.slots == 0 || e.slots >= ppn, UsageError,
                    "{}:{}: host '{}' has slots={}, fewer than --procs-per-host {} (raise "
                    "slots or pass --oversubscribe)",
                    options.hostfile, e.line, e.host, e.slots, ppn);
  }
}

// The variables mpirun forwards (-x): every --env, the PARTITA_* and Open MPI's run-as-root
// ones that are set, OMP_NUM_THREADS, a program's PYTHONPATH, and what the plan sets.
std::set<std::string> forwarded_env(const LaunchOptions& options, const LaunchFacts& facts,
                                    bool program, const LaunchPlan& plan) {
  std::set<std::string> forward(options.env.begin(), options.env.end());
  for (const auto& [name, value] : facts.env)
    if (name.rfind("PARTITA_", 0) == 0 || name == "OMP_NUM_THREADS" ||
        name == "OMPI_ALLOW_RUN_AS_ROOT" || name == "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM" ||
        (program && name == "PYTHONPATH"))  // where a script finds the partita package
      forward.insert(name);
  for (const auto& [name, value] : plan.env) forward.insert(name);
  return forward;
}

// The launcher and its placement flags (plan.argv so far), the variables it sets for the
// ranks (plan.env) and the host of each rank (plan.rank_hosts).
void plan_launcher(const LaunchOptions& options, const LaunchFacts& facts, bool program,
                   const Hosts& hosts, LaunchPlan& plan) {
  const int ppn = plan.layout.ranks_per_host;
  std::vector<std::string>& argv = plan.argv;
  const std::string n = std::to_string(plan.ranks);
  const std::string per_node = "ppr:" + std::to_string(ppn) + ":node";
  BindingRequest bind;
  bind.bind = options.bind;
  bind.cores = options.cores_per_host.value_or(facts.host_cores);
  bind.sockets = facts.host_sockets;
  bind.ranks_per_host = ppn;
  bind.srun = hosts.mode == Mode::kSlurmSrun;
  bind.local = hosts.mode == Mode::kLocal;
  bind.affinity_restricted = facts.affinity_restricted;
  const std::vector<std::string> binding = binding_flags(bind);
  // A program gets the layout's torch threads as OMP_NUM_THREADS (torch reads it), unless
  // the variable is set.
  if (program && plan.layout.torch_threads > 0 && facts.env.count("OMP_NUM_THREADS") == 0)
    plan.env["OMP_NUM_THREADS"] = std::to_string(plan.layout.torch_threads);
  // A terminal on launch's stderr: the ranks' stderr is a pipe to mpirun, so tell them.
  if (facts.stderr_is_terminal && facts.env.count("PARTITA_PROGRESS") == 0)
    plan.env["PARTITA_PROGRESS"] = "bar";
  if (hosts.mode == Mode::kSlurmSrun) {
    argv = {"srun", "--nodes=" + std::to_string(hosts.count), "--ntasks=" + n,
            "--ntasks-per-node=" + std::to_string(ppn)};
    if (options.oversubscribe) argv.push_back("--overcommit");
    argv.insert(argv.end(), binding.begin(), binding.end());
  } else {
    argv = {options.mpirun.value_or("mpirun"), "-np", n};
    if (hosts.mode == Mode::kLocal || hosts.mode == Mode::kHosts) {
      // host:N gives each host exactly N slots; the default by-slot mapping fills them.
      std::string list;
      for (const std::string& h : hosts.names)
        list += (list.empty() ? "" : ",") + h + ":" + std::to_string(ppn);
      argv.insert(argv.end(), {"--host", list});
    } else if (hosts.mode == Mode::kHostfile) {
      argv.insert(argv.end(), {"--hostfile", options.hostfile});
      if (binding.empty()) argv.insert(argv.end(), {"--map-by", per_node});
    } else if (binding.empty()) {  // kSlurmMpirun: Open MPI reads the hosts from Slurm
      argv.insert(argv.end(), {"--map-by", per_node});
    }
    if (options.oversubscribe) argv.push_back("--oversubscribe");
    argv.insert(argv.end(), binding.begin(), binding.end());
    if (hosts.mode != Mode::kLocal) {
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
    for (const std::string& name : forwarded_env(options, facts, program, plan))
      argv.insert(argv.end(), {"-x", name});
  }
  if (hosts.mode == Mode::kLocal || hosts.mode == Mode::kHosts) {
    for (const std::string& h : hosts.names) plan.rank_hosts.insert(plan.rank_hosts.end(), ppn, h);
  } else if (hosts.mode == Mode::kHostfile) {
    for (const HostfileEntry& e : hosts.hostfile)
      plan.rank_hosts.insert(plan.rank_hosts.end(), ppn, e.host);
  }
}

// The ranks' command, appended to plan.argv: this binary, the launcher's -q/-v unless the
// command has its own, the command with its paths made absolute, and the layout's threads
// as the command's flags it does not give already; or the program, as given but for
// relative paths. Returns the command's words as the ranks get them.
std::vector<std::string> append_rank_command(const LaunchOptions& options, const LaunchFacts& facts,
                                             const LaunchCommand& command, LaunchPlan& plan) {
  std::vector<std::string>& argv = plan.argv;
  const std::vector<std::string> words = absolutize_paths(options.command, command, facts.cwd);
  if (command.program.empty()) {
    argv.push_back(facts.partita_binary);
    if (command_index(options.command) == 0) {
      if (facts.log_level == LogLevel::kQuiet) argv.push_back("-q");
      if (facts.log_level == LogLevel::kDebug) argv.push_back("-v");
    }
  }
  argv.insert(argv.end(), words.begin(), words.end());
  std::set<std::string> given;
  for (const auto& [flag, value] :
       given_flag_values(options.command, thread_flag_names(workload_of(command))))
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
  return words;
}

// What launch tells the user about the command (plan.notes): how the ranks of a host take
// its GPUs, and across hosts, which paths every host must see.
void add_notes(const LaunchFacts& facts, const LaunchCommand& command, const Hosts& hosts,
               const std::string& parts_dir, const std::vector<std::string>& words,
               LaunchPlan& plan) {
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
  if (hosts.mode == Mode::kLocal) return;
  const bool program = !command.program.empty();
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

}  // namespace

LaunchPlan plan_launch(const LaunchOptions& options, const LaunchFacts& facts) {
  LaunchPlan plan;
  const LaunchCommand command = check_request(options, facts, plan);
  const Hosts hosts = find_hosts(options, facts);
  const std::string parts_dir = find_parts(options, facts, command, plan);
  choose_ranks(options, facts, command, hosts, parts_dir, plan);
  check_ranks(options, facts, command, hosts, parts_dir, plan);
  const bool program = !command.program.empty();
  plan_launcher(options, facts, program, hosts, plan);
  const std::vector<std::string> words = append_rank_command(options, facts, command, plan);
  add_notes(facts, command, hosts, parts_dir, words, plan);
  return plan;
}

}  // namespace partita::cli
