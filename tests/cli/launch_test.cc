// `partita launch`: the pure plan (argv for every mode, forwarding, quoting, each
// validation message) and the built binary (--dry-run lines, exit codes, real mpirun runs).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <typeinfo>

#include "helpers/test_paths.h"
#include "launch_plan.h"
#include "partita/core/error.h"

namespace partita::cli {
namespace {

constexpr const char* kBin = "/opt/partita/bin/partita";
// What launch adds across hosts so that mpirun notices a host it lost (docs/launch.md).
const std::string kKeepalive =
    "--mca oob_tcp_keepalive_time 10 --mca oob_tcp_keepalive_intvl 10 --mca "
    "oob_tcp_keepalive_probes 3 ";

LaunchFacts base_facts() {
  LaunchFacts facts;
  facts.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/u"}};
  facts.partita_binary = kBin;
  facts.cwd = "/home/u/work";
  return facts;
}

LaunchOptions train_on(const std::string& parts) {
  LaunchOptions options;
  options.command = {"train", "--parts", parts, "--epochs", "3"};
  return options;
}

std::string line_of(const LaunchOptions& options, const LaunchFacts& facts) {
  return shell_join(plan_launch(options, facts).argv);
}

// `f` throws exactly an `E` whose message is `message`.
template <class E>
void expect_throw(const std::function<void()>& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected: " << message;
  } catch (const std::exception& e) {
    EXPECT_EQ(typeid(e), typeid(E)) << e.what();
    EXPECT_EQ(std::string(e.what()), message);
  }
}

void expect_plan_error_usage(const LaunchOptions& options, const LaunchFacts& facts,
                             const std::string& message) {
  expect_throw<UsageError>([&] { plan_launch(options, facts); }, message);
}

// ---- the argv, mode by mode ----

TEST(LaunchPlan, LocalDefaultStartsOneRankPerPartOnThisHost) {
  LaunchFacts facts = base_facts();
  facts.parts = 4;
  LaunchPlan plan = plan_launch(train_on("p4"), facts);
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 4 --host localhost:4 /opt/partita/bin/partita train --parts "
            "/home/u/work/p4 --epochs 3");
  EXPECT_EQ(plan.ranks, 4);
  EXPECT_TRUE(plan.notes.empty());  // nothing to share with other hosts
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(LaunchPlan, LocalDefaultIsOneRankForAOnePartDirectory) {
  LaunchFacts facts = base_facts();
  facts.parts = 1;
  EXPECT_EQ(line_of(train_on("/data/p1"), facts),
            "mpirun -np 1 --host localhost:1 /opt/partita/bin/partita train --parts /data/p1 "
            "--epochs 3");
  LaunchOptions options = train_on("/data/p1");
  options.procs_per_host = 3;  // replicated mode: any number of ranks
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 3 --host localhost:3 /opt/partita/bin/partita train --parts /data/p1 "
            "--epochs 3");
}

TEST(LaunchPlan, HostsListGivesEachHostProcsPerHostSlots) {
  LaunchFacts facts = base_facts();
  facts.parts = 4;
  LaunchOptions options = train_on("/data/p4");
  options.hosts = "node1,node2";
  options.procs_per_host = 2;
  LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 4 --host node1:2,node2:2 " + kKeepalive +
                "/opt/partita/bin/partita train --parts /data/p4 --epochs 3");
  EXPECT_EQ(plan.ranks, 4);
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_EQ(plan.notes[0],
            "launch: every host must see /opt/partita/bin/partita and the partition directory "
            "/data/p4 at the same paths");
}

TEST(LaunchPlan, ProcsPerHostDefaultsToThePartsSpreadOverTheHosts) {
  LaunchFacts facts = base_facts();
  facts.parts = 6;
  LaunchOptions options = train_on("/data/p6");
  options.hosts = "a,b,c";
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 6 --host a:2,b:2,c:2 " + kKeepalive +
                "/opt/partita/bin/partita train --parts /data/p6 --epochs 3");
  facts.parts = 0;  // no --parts: one rank per host
  options.command = {"sample-bench", "--batches", "2"};
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 3 --host a:1,b:1,c:1 " + kKeepalive +
                "/opt/partita/bin/partita sample-bench --batches 2");
  EXPECT_EQ(plan_launch(options, facts).notes,
            std::vector<std::string>{
                "launch: every host must see /opt/partita/bin/partita at the same path"});
}

TEST(LaunchPlan, HostsLocalhostAloneIsTheLocalLaunch) {
  LaunchFacts facts = base_facts();
  facts.parts = 2;
  LaunchOptions options = train_on("/data/p2");
  options.hosts = "localhost";
  options.procs_per_host = 2;
  options.oversubscribe = true;
  LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 2 --host localhost:2 --oversubscribe /opt/partita/bin/partita train "
            "--parts /data/p2 --epochs 3");
  EXPECT_TRUE(plan.notes.empty());
}

TEST(LaunchPlan, HostfileMapsProcsPerHostPerNode) {
  LaunchFacts facts = base_facts();
  facts.parts = 4;
  facts.hostfile_text = "# cluster\nnode1 slots=4\n\n  node2 slots=4 max_slots=8  # big\n";
  LaunchOptions options = train_on("/data/p4");
  options.hostfile = "hosts.txt";
  LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 4 --hostfile hosts.txt --map-by ppr:2:node " + kKeepalive +
                "/opt/partita/bin/partita train --parts /data/p4 --epochs 3");
  EXPECT_EQ(plan.notes.size(), 1u);
  options.oversubscribe = true;
  options.mpirun = "/opt/ompi/bin/mpirun";
  EXPECT_EQ(line_of(options, facts),
            "/opt/ompi/bin/mpirun -np 4 --hostfile hosts.txt --map-by ppr:2:node "
            "--oversubscribe " +
                kKeepalive + "/opt/partita/bin/partita train --parts /data/p4 --epochs 3");
}

TEST(LaunchPlan, SlurmWithoutHostsUsesSrunOverTheAllocation) {
  LaunchFacts facts = base_facts();
  facts.env["SLURM_JOB_ID"] = "4242";
  facts.env["SLURM_JOB_NUM_NODES"] = "2";
  facts.env["PARTITA_TRACE"] = "1";  // srun forwards the environment itself: no -x
  facts.parts = 4;
  LaunchPlan plan = plan_launch(train_on("/scratch/p4"), facts);
  EXPECT_EQ(shell_join(plan.argv),
            "srun --nodes=2 --ntasks=4 --ntasks-per-node=2 /opt/partita/bin/partita train "
            "--parts /scratch/p4 --epochs 3");
  EXPECT_EQ(plan.notes.size(), 1u);

  LaunchOptions options = train_on("/scratch/p4");
  options.oversubscribe = true;
  EXPECT_EQ(line_of(options, facts),
            "srun --nodes=2 --ntasks=4 --ntasks-per-node=2 --overcommit "
            "/opt/partita/bin/partita train --parts /scratch/p4 --epochs 3");

  facts.env.erase("SLURM_JOB_NUM_NODES");  // older Slurm: SLURM_NNODES only
  facts.env["SLURM_NNODES"] = "4";
  facts.parts = 1;
  EXPECT_EQ(line_of(train_on("/scratch/p1"), facts),
            "srun --nodes=4 --ntasks=4 --ntasks-per-node=1 /opt/partita/bin/partita train "
            "--parts /scratch/p1 --epochs 3");
}

TEST(LaunchPlan, SlurmWithHostsOrMpirunUsesMpirun) {
  LaunchFacts facts = base_facts();
  facts.env["SLURM_JOB_ID"] = "4242";
  facts.env["SLURM_JOB_NUM_NODES"] = "2";
  facts.env["PARTITA_TRACE"] = "1";
  facts.parts = 2;
  LaunchOptions options = train_on("/scratch/p2");
  options.hosts = "n1,n2";
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host n1:1,n2:1 " + kKeepalive +
                "-x PARTITA_TRACE /opt/partita/bin/partita train --parts /scratch/p2 --epochs 3");
  options.hosts.clear();
  options.mpirun = "mpirun";  // explicit: Open MPI reads the hosts from the allocation
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --map-by ppr:1:node " + kKeepalive +
                "-x PARTITA_TRACE /opt/partita/bin/partita train --parts /scratch/p2 --epochs 3");
}

TEST(LaunchPlan, ForwardsPartitaOmpAndRunAsRootVariablesSorted) {
  LaunchFacts facts = base_facts();
  facts.env["PARTITA_B"] = "2";
  facts.env["PARTITA_A"] = "";  // set, though empty: forwarded
  facts.env["PARTITAX"] = "no";
  facts.env["OMP_NUM_THREADS"] = "4";
  facts.env["OMP_PROC_BIND"] = "close";
  facts.env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
  facts.env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
  facts.env["LD_LIBRARY_PATH"] = "/opt/torch/lib";
  facts.parts = 1;
  LaunchOptions options = train_on("/data/p1");
  options.env = {"LD_LIBRARY_PATH", "PARTITA_B"};
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 1 --host localhost:1 -x LD_LIBRARY_PATH -x OMPI_ALLOW_RUN_AS_ROOT "
            "-x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM -x OMP_NUM_THREADS -x PARTITA_A -x PARTITA_B "
            "/opt/partita/bin/partita train --parts /data/p1 --epochs 3");
}

TEST(LaunchPlan, PassesTheLaunchersLogLevelUnlessTheCommandHasItsOwn) {
  LaunchFacts facts = base_facts();
  facts.parts = 1;
  facts.log_level = LogLevel::kQuiet;
  EXPECT_EQ(line_of(train_on("/p"), facts),
            "mpirun -np 1 --host localhost:1 /opt/partita/bin/partita -q train --parts /p "
            "--epochs 3");
  facts.log_level = LogLevel::kDebug;
  EXPECT_EQ(line_of(train_on("/p"), facts),
            "mpirun -np 1 --host localhost:1 /opt/partita/bin/partita -v train --parts /p "
            "--epochs 3");
  LaunchOptions options;
  options.command = {"--quiet", "sample-bench", "--parts", "/p"};
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 1 --host localhost:1 /opt/partita/bin/partita --quiet sample-bench "
            "--parts /p");
}

TEST(LaunchPlan, MakesTheParsDirectoryAbsoluteLexically) {
  LaunchFacts facts = base_facts();
  facts.parts = 1;
  LaunchOptions options;
  options.command = {"train", "--parts=../shared/./p1", "--epochs", "1"};
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 1 --host localhost:1 /opt/partita/bin/partita train "
            "--parts=/home/u/shared/p1 --epochs 1");
  options.command = {"sample-bench", "--parts", "/abs/p1"};
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 1 --host localhost:1 /opt/partita/bin/partita sample-bench --parts "
            "/abs/p1");
}

// ---- --dry-run quoting ----

TEST(LaunchPlan, ShellQuotingLeavesSafeWordsBareAndQuotesTheRest) {
  EXPECT_EQ(shell_quote("train"), "train");
  EXPECT_EQ(shell_quote("--parts=/a/b.c-d_e,f:g@h%i+j"), "--parts=/a/b.c-d_e,f:g@h%i+j");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("my parts"), "'my parts'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_quote("~/p"), "'~/p'");
  EXPECT_EQ(shell_quote("a*"), "'a*'");
  EXPECT_EQ(shell_quote("x\ny"), "'x\ny'");
  EXPECT_EQ(shell_join({"mpirun", "-np", "2", "/d/my parts", ""}), "mpirun -np 2 '/d/my parts' ''");

  LaunchFacts facts = base_facts();
  facts.parts = 1;
  facts.cwd = "/home/u/my work";
  EXPECT_EQ(line_of(train_on("it's"), facts),
            "mpirun -np 1 --host localhost:1 /opt/partita/bin/partita train --parts "
            "'/home/u/my work/it'\\''s' --epochs 3");
}

// ---- validation: every message ----

TEST(LaunchPlan, RejectsCommandsThatAreNotDistributed) {
  const LaunchFacts facts = base_facts();
  auto with = [](std::vector<std::string> command) {
    LaunchOptions options;
    options.command = std::move(command);
    return options;
  };
  const std::string nothing =
      "launch: nothing to launch (put the command after --, e.g. partita launch -- train "
      "--parts DIR)";
  expect_plan_error_usage(with({}), facts, nothing);
  expect_plan_error_usage(with({"-q", "-v"}), facts, nothing);
  expect_plan_error_usage(with({"launch", "--", "train"}), facts,
                          "launch: cannot launch `launch` itself; give train or sample-bench "
                          "after --");
  expect_plan_error_usage(with({"partition", "--dataset", "d", "--out", "p"}), facts,
                          "launch: 'partition' is not a distributed command; launch runs train "
                          "or sample-bench (run `partita partition` directly)");
  expect_plan_error_usage(with({"info", "p"}), facts,
                          "launch: 'info' is not a distributed command; launch runs train or "
                          "sample-bench (run `partita info` directly)");
  expect_plan_error_usage(with({"--help"}), facts,
                          "launch: '--help' before the command; only -q/--quiet/-v/--verbose "
                          "may come before train or sample-bench");
  expect_plan_error_usage(with({"trian", "--parts", "p"}), facts,
                          "launch: 'trian' is not a partita command; launch runs train or "
                          "sample-bench");
  expect_plan_error_usage(with({"train", "--epochs", "1", "--parts"}), facts,
                          "launch: --parts needs a value");
}

TEST(LaunchPlan, ExplainsUnknownFlags) {
  const LaunchFacts facts = base_facts();
  LaunchOptions options;
  options.command = {"train", "/data/p"};  // `train --parts /data/p` without the --
  options.unparsed = {"--parts"};
  expect_plan_error_usage(options, facts,
                          "launch: put -- before the command to launch (partita launch "
                          "[options] -- train ...); not a launch flag: --parts");
  options.unparsed = {"--bogus", "--"};
  expect_plan_error_usage(options, facts,
                          "launch: unknown flag --bogus (the command to launch goes after --; "
                          "see partita launch --help)");
  options.command.clear();
  options.unparsed = {"--a", "-b"};
  expect_plan_error_usage(options, facts,
                          "launch: unknown flags --a -b (the command to launch goes after --; "
                          "see partita launch --help)");
  options.unparsed = {"--"};  // the separator alone is fine; the empty command is not
  expect_plan_error_usage(options, facts,
                          "launch: nothing to launch (put the command after --, e.g. partita "
                          "launch -- train --parts DIR)");
}

TEST(LaunchPlan, RejectsBadHostFlags) {
  LaunchFacts facts = base_facts();
  LaunchOptions options = train_on("/p");
  options.hosts = "a";
  options.hostfile = "hosts.txt";
  expect_plan_error_usage(options, facts, "--hosts and --hostfile: give one or the other");
  options.hostfile.clear();
  for (const char* list : {"a,,b", "a,", ",a"}) {
    options.hosts = list;
    expect_plan_error_usage(options, facts,
                            std::string("--hosts: empty host name in '") + list + "'");
  }
  options.hosts = "a:2,b:2";
  expect_plan_error_usage(options, facts,
                          "--hosts: 'a:2': give bare host names and the ranks per host with "
                          "--procs-per-host");
  options.hosts = "a,b,a";
  expect_plan_error_usage(options, facts, "--hosts: 'a' listed twice");
  options.hosts = "a b";
  expect_plan_error_usage(options, facts, "--hosts: 'a b' is not a host name");
}

TEST(LaunchPlan, RejectsBadCountsLaunchersAndVariables) {
  LaunchFacts facts = base_facts();
  LaunchOptions options = train_on("/p");
  for (int n : {0, -1}) {
    options.procs_per_host = n;
    expect_plan_error_usage(options, facts,
                            "--procs-per-host: must be >= 1, got " + std::to_string(n));
  }
  options.procs_per_host.reset();
  options.mpirun = "";
  expect_plan_error_usage(options, facts, "--mpirun: empty path");
  options.mpirun.reset();
  options.env = {"A=B"};
  expect_plan_error_usage(options, facts,
                          "--env: 'A=B' is not a variable name (set the value in the "
                          "environment)");
  options.env = {"NOT_SET_ANYWHERE"};
  expect_plan_error_usage(options, facts, "--env: NOT_SET_ANYWHERE is not set");

  facts.env["OMPI_COMM_WORLD_SIZE"] = "2";
  options.env.clear();
  expect_throw<Error>([&] { plan_launch(options, facts); },
                      "launch: already inside an MPI job (OMPI_COMM_WORLD_SIZE is set); run "
                      "the command without launch");
}

TEST(LaunchPlan, RankCountMustMatchTheParts) {
  LaunchFacts facts = base_facts();
  facts.parts = 4;
  LaunchOptions options = train_on("/data/p4");
  options.hosts = "a,b,c";
  options.procs_per_host = 1;
  expect_plan_error_usage(options, facts,
                          "launch: /data/p4 has 4 parts but 3 hosts x 1 procs-per-host = 3 "
                          "ranks; train needs one rank per part (or a 1-part directory)");
  options.procs_per_host.reset();
  expect_plan_error_usage(options, facts,
                          "launch: /data/p4 has 4 parts, which cannot be spread evenly over 3 "
                          "hosts (each host runs the same number of ranks, one per part); "
                          "repartition into a multiple of 3 parts");
  options.hosts.clear();
  options.procs_per_host = 2;
  options.command = {"sample-bench", "--parts", "/data/p4"};
  expect_plan_error_usage(options, facts,
                          "launch: /data/p4 has 4 parts but 1 host x 2 procs-per-host = 2 "
                          "ranks; sample-bench needs one rank per part (or a 1-part directory)");
}

TEST(LaunchPlan, UnreadablePartsIsAnErrorExceptOnDryRun) {
  LaunchFacts facts = base_facts();
  facts.parts_error = "/data/p/partita.json: cannot open (No such file or directory)";
  LaunchOptions options = train_on("/data/p");
  options.hosts = "a,b";
  options.procs_per_host = 2;
  expect_throw<Error>([&] { plan_launch(options, facts); }, facts.parts_error);
  options.dry_run = true;
  LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 4 --host a:2,b:2 " + kKeepalive +
                "/opt/partita/bin/partita train --parts /data/p --epochs 3");
  EXPECT_EQ(plan.warnings, std::vector<std::string>{facts.parts_error});
}

TEST(LaunchPlan, RejectsBadHostfiles) {
  LaunchFacts facts = base_facts();
  LaunchOptions options = train_on("/p");
  options.hostfile = "hosts.txt";
  facts.hostfile_error = "No such file or directory";
  expect_throw<IoError>([&] { plan_launch(options, facts); },
                        "hosts.txt: cannot read hostfile (No such file or directory)");
  auto with_text = [&](const std::string& text) {
    facts.hostfile_text = text;
    return [&] { plan_launch(options, facts); };
  };
  expect_throw<FormatError>(with_text(""), "hosts.txt: lists no hosts");
  expect_throw<FormatError>(with_text("# only\n   \n# comments\n"), "hosts.txt: lists no hosts");
  expect_throw<FormatError>(with_text("a\nb\n a slots=2\n"),
                            "hosts.txt:3: host 'a' already listed on line 1");
  expect_throw<FormatError>(with_text("a slots=x\n"), "hosts.txt:1: bad slots value 'x'");
  expect_throw<FormatError>(with_text("a\nb slots=0\n"), "hosts.txt:2: bad slots value '0'");

  facts.hostfile_text = "a slots=4\nb slots=1\n";
  facts.parts = 4;
  options.procs_per_host = 2;
  expect_plan_error_usage(options, facts,
                          "hosts.txt:2: host 'b' has slots=1, fewer than --procs-per-host 2 "
                          "(raise slots or pass --oversubscribe)");
  options.oversubscribe = true;
  EXPECT_EQ(plan_launch(options, facts).ranks, 4);
}

TEST(LaunchPlan, SlurmWithoutANodeCountIsAnError) {
  LaunchFacts facts = base_facts();
  facts.env["SLURM_JOB_ID"] = "77";
  expect_throw<Error>([&] { plan_launch(train_on("/p"), facts); },
                      "SLURM_JOB_NUM_NODES: '' is not a node count in Slurm job 77; pass "
                      "--hosts or --hostfile");
  facts.env["SLURM_JOB_NUM_NODES"] = "two";
  expect_throw<Error>([&] { plan_launch(train_on("/p"), facts); },
                      "SLURM_JOB_NUM_NODES: 'two' is not a node count in Slurm job 77; pass "
                      "--hosts or --hostfile");
}

TEST(LaunchPlan, ParseHostfileReadsHostsAndSlots) {
  std::vector<HostfileEntry> hosts =
      parse_hostfile("n1 slots=2\n# c\nn2\tmax_slots=4 slots=8 #x\n", "f");
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].host, "n1");
  EXPECT_EQ(hosts[0].slots, 2);
  EXPECT_EQ(hosts[0].line, 1);
  EXPECT_EQ(hosts[1].host, "n2");
  EXPECT_EQ(hosts[1].slots, 8);
  EXPECT_EQ(hosts[1].line, 3);
}

// ---- binding, paths, progress, keepalive, supervision messages ----

TEST(LaunchPlan, BindsEachRankToItsShareOfTheCoresByDefault) {
  LaunchFacts facts = base_facts();
  facts.parts = 2;
  facts.host_cores = 8;
  LaunchOptions options = train_on("/data/p2");
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=4 --bind-to core "
            "/opt/partita/bin/partita train --parts /data/p2 --epochs 3");
  facts.host_cores = 3;  // 3 cores for 2 ranks: one each, the third idle
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=1 --bind-to core "
            "/opt/partita/bin/partita train --parts /data/p2 --epochs 3");
  facts.host_cores = 1;  // fewer cores than ranks: not bound
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node --bind-to none "
            "/opt/partita/bin/partita train --parts /data/p2 --epochs 3");
  options.cores_per_host = 4;  // the user knows better than this host
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=2 --bind-to core "
            "/opt/partita/bin/partita train --parts /data/p2 --epochs 3");
  options.bind = Bind::kSocket;
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node --bind-to socket "
            "/opt/partita/bin/partita train --parts /data/p2 --epochs 3");
  options.bind = Bind::kNone;
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node --bind-to none "
            "/opt/partita/bin/partita train --parts /data/p2 --epochs 3");
  // Cores unknown: binding only as asked, without PE.
  facts.host_cores = 0;
  options.cores_per_host.reset();
  options.bind = Bind::kCore;
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node --bind-to core "
            "/opt/partita/bin/partita train --parts /data/p2 --epochs 3");
}

TEST(LaunchPlan, BindingReplacesTheHostfileMappingAndReachesSrunOnlyWhenAsked) {
  LaunchFacts facts = base_facts();
  facts.parts = 4;
  facts.host_cores = 4;
  facts.hostfile_text = "n1\nn2\n";
  LaunchOptions options = train_on("/data/p4");
  options.hostfile = "h";
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 4 --hostfile h --map-by ppr:2:node:PE=2 --bind-to core " + kKeepalive +
                "/opt/partita/bin/partita train --parts /data/p4 --epochs 3");
  options.hostfile.clear();
  facts.env["SLURM_JOB_ID"] = "7";
  facts.env["SLURM_JOB_NUM_NODES"] = "2";
  EXPECT_EQ(line_of(options, facts),
            "srun --nodes=2 --ntasks=4 --ntasks-per-node=2 /opt/partita/bin/partita train "
            "--parts /data/p4 --epochs 3");
  options.bind = Bind::kCore;
  EXPECT_EQ(line_of(options, facts),
            "srun --nodes=2 --ntasks=4 --ntasks-per-node=2 --cpu-bind=cores "
            "/opt/partita/bin/partita train --parts /data/p4 --epochs 3");
}

TEST(LaunchPlan, RejectsBadBindingFlags) {
  LaunchFacts facts = base_facts();
  facts.parts = 4;
  facts.host_cores = 2;
  LaunchOptions options = train_on("/data/p4");
  options.bind = Bind::kCore;
  expect_plan_error_usage(options, facts,
                          "--bind core: 4 ranks per host but 2 cores per host (pass --bind "
                          "none, or --cores-per-host N if the hosts have more cores than this "
                          "one)");
  options.cores_per_host = 0;
  expect_plan_error_usage(options, facts, "--cores-per-host: must be >= 1, got 0");
  EXPECT_EQ(parse_bind("core"), Bind::kCore);
  EXPECT_EQ(parse_bind("socket"), Bind::kSocket);
  EXPECT_EQ(parse_bind("none"), Bind::kNone);
  expect_throw<UsageError>([] { parse_bind("cores"); },
                           "--bind: 'cores' is not core, socket or none");
}

TEST(LaunchPlan, MakesCheckpointAndMetricsPathsAbsolute) {
  LaunchFacts facts = base_facts();
  facts.parts = 2;
  LaunchOptions options;
  options.command = {"train",          "--parts",       "p2",    "--checkpoint-dir",
                     "../ck",          "--metrics-out=m/x.jsonl", "--epochs", "2",
                     "--metrics-out",  "/abs/m.jsonl"};
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 /opt/partita/bin/partita train --parts "
            "/home/u/work/p2 --checkpoint-dir /home/u/ck --metrics-out=/home/u/work/m/x.jsonl "
            "--epochs 2 --metrics-out /abs/m.jsonl");
}

TEST(LaunchPlan, ATerminalAsksTheRanksForAProgressBar) {
  LaunchFacts facts = base_facts();
  facts.parts = 2;
  facts.stderr_is_terminal = true;
  LaunchOptions options = train_on("/data/p2");
  LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(plan.env, (std::map<std::string, std::string>{{"PARTITA_PROGRESS", "bar"}}));
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 2 --host localhost:2 -x PARTITA_PROGRESS /opt/partita/bin/partita "
            "train --parts /data/p2 --epochs 3");
  facts.env["PARTITA_PROGRESS"] = "lines";  // the user's choice stands, forwarded once
  plan = plan_launch(options, facts);
  EXPECT_TRUE(plan.env.empty());
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 2 --host localhost:2 -x PARTITA_PROGRESS /opt/partita/bin/partita "
            "train --parts /data/p2 --epochs 3");
  facts.stderr_is_terminal = false;
  facts.env.erase("PARTITA_PROGRESS");
  EXPECT_TRUE(plan_launch(options, facts).env.empty());
}

TEST(LaunchPlan, KeepaliveOnlyAcrossHostsAndUserSettingsWin) {
  LaunchFacts facts = base_facts();
  facts.parts = 2;
  LaunchOptions options = train_on("/data/p2");
  EXPECT_EQ(line_of(options, facts).find("keepalive"), std::string::npos);
  options.hosts = "a,b";
  facts.env["OMPI_MCA_oob_tcp_keepalive_time"] = "60";
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host a:1,b:1 --mca oob_tcp_keepalive_intvl 10 --mca "
            "oob_tcp_keepalive_probes 3 /opt/partita/bin/partita train --parts /data/p2 "
            "--epochs 3");
}

TEST(LaunchPlan, KnowsTheHostOfEveryRank) {
  LaunchFacts facts = base_facts();
  facts.parts = 4;
  LaunchOptions options = train_on("/data/p4");
  options.hosts = "a,b";
  EXPECT_EQ(plan_launch(options, facts).rank_hosts,
            (std::vector<std::string>{"a", "a", "b", "b"}));
  options.hosts.clear();
  options.hostfile = "h";
  facts.hostfile_text = "x slots=2\ny slots=2\n";
  EXPECT_EQ(plan_launch(options, facts).rank_hosts,
            (std::vector<std::string>{"x", "x", "y", "y"}));
  options.hostfile.clear();
  facts.env["SLURM_JOB_ID"] = "7";
  facts.env["SLURM_JOB_NUM_NODES"] = "2";
  EXPECT_TRUE(plan_launch(options, facts).rank_hosts.empty());
}

TEST(LaunchPlan, RecognizesFailureLines) {
  EXPECT_TRUE(is_failure_line("error: rank 0: rank 1 did not answer a ping within 5 s"));
  EXPECT_TRUE(is_failure_line("mpirun noticed that process rank 1 with PID 0 on node b exited "
                              "on signal 9 (Killed)."));
  EXPECT_TRUE(is_failure_line("ORTE has lost communication with a remote daemon."));
  EXPECT_TRUE(is_failure_line("MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD"));
  EXPECT_FALSE(is_failure_line("epoch=1 steps=9 loss=1.9 error_rate=0.1"));
  EXPECT_FALSE(is_failure_line("warning: error: not at the start"));
  EXPECT_FALSE(is_failure_line(""));
}

TEST(LaunchPlan, StuckMessageNamesTheHostsOfTheRanksTheFailureNames) {
  LaunchPlan plan;
  plan.rank_hosts = {"a", "a", "b", "b"};
  EXPECT_EQ(stuck_message(plan, "error: rank 0: rank 3 did not answer a ping within 5 s", 10),
            "launch: the job failed but mpirun had not exited 10 s later; it could not reach "
            "host b (rank 3); killed mpirun and the processes it started here");
  // The reporter's own host, and ranks out of range, are not suspects.
  EXPECT_EQ(stuck_message(plan, "error: rank 2: rank 3 and rank 9 did not answer", 4),
            "launch: the job failed but mpirun had not exited 4 s later; it could not reach a "
            "host; killed mpirun and the processes it started here");
  EXPECT_EQ(stuck_message(plan, "", 10),
            "launch: mpirun did not exit 10 s after it was asked to stop; it could not reach a "
            "host; killed mpirun and the processes it started here");
}

// ---- the built binary ----

using testing::CommandResult;
using testing::TempDir;

std::string binary() { return testing::partita_binary(); }
// The path /proc/self/exe reports for the binary.
std::string real_binary() { return std::filesystem::canonical(binary()).string(); }

CommandResult partita(const std::string& args) {
  return testing::run_command(binary() + " " + args);
}
// Runs with a clean environment (PATH only), stdout and stderr together.
CommandResult partita_clean_env(const std::string& args,
                                const std::string& path = "/usr/bin:/bin") {
  return testing::run_command("env -i PATH=" + path + " " + binary() + " " + args);
}
// Same, stdout only.
CommandResult partita_stdout(const std::string& args) {
  return testing::run_command("{ env -i PATH=/usr/bin:/bin " + binary() + " " + args +
                              " 2>/dev/null; }");
}

// A tiny 2-part partition shared by the tests below.
class LaunchCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    CommandResult g = partita(
        "-q generate --nodes 2000 --avg-degree 8 --feat-dim 8 --classes 4 "
        "--seed 3 --out " +
        *dir_ / "ds");
    ASSERT_EQ(g.exit_code, 0) << g.out;
    CommandResult p = partita("-q partition --dataset " + *dir_ / "ds" +
                              " --num-parts 2 --seed 1 --out " + *dir_ / "p2");
    ASSERT_EQ(p.exit_code, 0) << p.out;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string p2() { return *dir_ / "p2"; }
  static TempDir* dir_;
};
TempDir* LaunchCli::dir_ = nullptr;

TEST_F(LaunchCli, HelpSaysThePartitionMustBeOnEveryHost) {
  CommandResult r = partita("launch --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Every host must see the partition directory (--parts) and this partita "
                       "binary at the\nsame paths"),
            std::string::npos)
      << r.out;
  for (const char* flag : {"--hosts", "--hostfile", "--procs-per-host", "--oversubscribe",
                           "--mpirun", "--env", "--dry-run", "--bind", "--cores-per-host",
                           "--teardown-timeout"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  EXPECT_NE(partita("--help").out.find("launch"), std::string::npos);
}

TEST_F(LaunchCli, DryRunPrintsTheMpirunLine) {
  TempDir dir;
  // The example; X is absent, which --dry-run only warns about.
  CommandResult r = partita_stdout(
      "launch --dry-run --hosts a,b --procs-per-host 2 --cores-per-host 8 -- train "
      "--parts " +
      dir / "X");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "mpirun -np 4 --host a:2,b:2 --map-by ppr:2:node:PE=4 --bind-to core " +
                       kKeepalive + real_binary() + " train --parts " + dir / "X" + "\n");
  CommandResult all = partita_clean_env(
      "launch --dry-run --hosts a,b --procs-per-host 2 -- "
      "train --parts " +
      dir / "X");
  EXPECT_EQ(all.exit_code, 0);
  EXPECT_NE(all.out.find("warning: " + dir / "X"), std::string::npos) << all.out;

  // With a real 2-part directory: ranks from its parts; the whole output is exact, and
  // launch's own flag names after -- belong to the launched command.
  CommandResult exact = partita_clean_env(
      "launch --dry-run --hosts a,b --bind socket -- train --parts " + p2() +
      " --hosts x --dry-run");
  EXPECT_EQ(exact.exit_code, 0);
  EXPECT_EQ(exact.out, "launch: every host must see " + real_binary() +
                           " and the partition directory " + p2() +
                           " at the same paths\nmpirun -np 2 --host a:1,b:1 --map-by "
                           "ppr:1:node --bind-to socket " +
                           kKeepalive + real_binary() + " train --parts " + p2() +
                           " --hosts x --dry-run\n");
}

TEST_F(LaunchCli, DryRunForwardsVariablesQuotesAndPassesQuiet) {
  const std::string spaced = *dir_ / "my parts";
  std::filesystem::remove_all(spaced);
  std::filesystem::copy(p2(), spaced, std::filesystem::copy_options::recursive);
  CommandResult r = testing::run_command(
      "env -i PATH=/usr/bin:/bin PARTITA_DEMO=1 OMP_NUM_THREADS=2 " + binary() +
      " -q launch --dry-run --bind none -- sample-bench --parts '" + spaced +
      "' --fanouts '5, 5'");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node --bind-to none -x "
            "OMP_NUM_THREADS -x PARTITA_DEMO " +
                       real_binary() + " -q sample-bench --parts '" + spaced +
                       "' --fanouts '5, 5'\n");
}

TEST_F(LaunchCli, DryRunInsideSlurmPrintsSrun) {
  CommandResult r = testing::run_command(
      "{ env -i PATH=/usr/bin:/bin SLURM_JOB_ID=9 SLURM_JOB_NUM_NODES=2 " + binary() +
      " launch --dry-run -- train --parts " + p2() + " 2>/dev/null; }");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "srun --nodes=2 --ntasks=2 --ntasks-per-node=1 " + real_binary() +
                       " train --parts " + p2() + "\n");
}

// Exit code `code` and exactly the one line `line`.
void expect_only_error(const CommandResult& r, int code, const std::string& line) {
  EXPECT_EQ(r.exit_code, code) << r.out;
  EXPECT_EQ(r.out, line + "\n");
}

TEST_F(LaunchCli, BadFlagsExitTwoWithOneErrorLine) {
  expect_only_error(partita("launch --dry-run --hosts a --hostfile h -- train --parts " + p2()), 2,
                    "error: --hosts and --hostfile: give one or the other");
  expect_only_error(partita("launch --procs-per-host 0 -- train --parts " + p2()), 2,
                    "error: --procs-per-host: must be >= 1, got 0");
  expect_only_error(partita("launch --dry-run"), 2,
                    "error: launch: nothing to launch (put the command after --, e.g. "
                    "partita launch -- train --parts DIR)");
  expect_only_error(partita("launch --dry-run -- launch -- train"), 2,
                    "error: launch: cannot launch `launch` itself; give train or sample-bench "
                    "after --");
  expect_only_error(partita("launch --dry-run -- generate --out x"), 2,
                    "error: launch: 'generate' is not a distributed command; launch runs "
                    "train or sample-bench (run `partita generate` directly)");
  expect_only_error(partita("launch --dry-run --hosts a,a -- train"), 2,
                    "error: --hosts: 'a' listed twice");
  expect_only_error(partita("launch --dry-run --hosts a --parts " + p2()), 2,
                    "error: launch: unknown flag --parts (the command to launch goes after "
                    "--; see partita launch --help)");
  expect_only_error(partita("launch --dry-run --hosts a train --parts " + p2() + " --epochs 2"), 2,
                    "error: launch: put -- before the command to launch (partita launch "
                    "[options] -- train ...); not a launch flag: --parts --epochs");
  expect_only_error(partita("launch --procs-per-host two -- train"), 2,
                    "error: Could not convert: --procs-per-host = two");
  expect_only_error(partita("launch --bogus -x -- train"), 2,
                    "error: launch: unknown flags --bogus -x (the command to launch goes after "
                    "--; see partita launch --help)");
  expect_only_error(partita("launch --hosts"), 2, "error: --hosts: 1 required H1,H2,... missing");
  expect_only_error(partita("launch --bind cores -- train"), 2,
                    "error: --bind: 'cores' is not core, socket or none");
  expect_only_error(partita("launch --teardown-timeout 0 -- train"), 2,
                    "error: --teardown-timeout: must be > 0 seconds, got 0");
  expect_only_error(partita("launch --dry-run --cores-per-host 0 -- train"), 2,
                    "error: --cores-per-host: must be >= 1, got 0");
}

TEST_F(LaunchCli, MissingFilesAndLaunchersExitOne) {
  TempDir dir;
  expect_only_error(partita("launch --dry-run --hostfile " + dir / "absent" + " -- train"), 1,
                    "error: " + dir / "absent" +
                        ": cannot read hostfile (No such file or "
                        "directory)");
  testing::write_file(dir / "empty", "# nothing\n");
  expect_only_error(partita("launch --dry-run --hostfile " + dir / "empty" + " -- train"), 1,
                    "error: " + dir / "empty" + ": lists no hosts");
  CommandResult parts = partita("launch -- train --parts " + dir / "absent");
  EXPECT_EQ(parts.exit_code, 1);
  EXPECT_EQ(parts.out.rfind("error: " + dir / "absent", 0), 0u) << parts.out;
  expect_only_error(partita_clean_env("launch -- train --parts " + p2(), "/nonexistent"), 1,
                    "error: mpirun: not found on PATH (install openmpi-bin or pass --mpirun)");
  expect_only_error(partita("launch --mpirun " + dir / "mpirun" + " -- train --parts " + p2()), 1,
                    "error: " + dir / "mpirun" + ": not an executable file (--mpirun)");
  // --dry-run only warns: the line is still printed.
  CommandResult dry = partita_clean_env(
      "launch --dry-run --cores-per-host 1 -- train --parts " + p2(), "/nonexistent");
  EXPECT_EQ(dry.exit_code, 0);
  EXPECT_EQ(dry.out,
            "warning: mpirun: not found on PATH (install openmpi-bin or pass "
            "--mpirun)\nmpirun -np 2 --host localhost:2 --map-by ppr:2:node --bind-to none " +
                real_binary() + " train --parts " + p2() + "\n");
}

TEST_F(LaunchCli, RunsSampleBenchOnTwoLocalRanks) {
  CommandResult r = partita(
      "launch --hosts localhost --procs-per-host 2 --oversubscribe -- "
      "sample-bench --parts " +
      p2() + " --fanouts 5,5 --batch-size 64 --batches 3 --timeout 60");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("launch: mpirun -np 2 --host localhost:2 --oversubscribe"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"benchmark\": \"sample-bench\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"ranks\": 2,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"replicated\": false"), std::string::npos) << r.out;
}

// A stand-in for mpirun: a shell script `body` in `dir`, for --mpirun.
std::string fake_mpirun(const TempDir& dir, const std::string& body) {
  const std::string path = dir / "fake-mpirun";
  testing::write_file(path, "#!/bin/sh\n" + body + "\n");
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

TEST_F(LaunchCli, ReturnsTheExitStatusOfMpirun) {
  TempDir dir;
  const std::string mpirun = fake_mpirun(dir, "echo 'ranks ran' >&2; exit 3");
  CommandResult r = partita("-q launch --mpirun " + mpirun + " -- train --parts " + p2());
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_EQ(r.out, "ranks ran\n");  // mpirun's stderr is relayed unchanged
}

TEST_F(LaunchCli, KillsAStuckMpirunAfterTheJobFailed) {
  TempDir dir;
  // Reports a rank's failure, then hangs ignoring SIGTERM, with a child that does too.
  const std::string mpirun = fake_mpirun(
      dir, "trap '' TERM\necho 'error: rank 0: rank 1 did not answer a ping within 5 s' >&2\n"
           "sleep 300 & echo $! > " + dir / "child" + "\nwait");
  CommandResult r = partita("-q launch --hosts a,b --teardown-timeout 1 --mpirun " + mpirun +
                            " -- train --parts " + p2());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out,
            "error: rank 0: rank 1 did not answer a ping within 5 s\n"
            "error: launch: the job failed but mpirun had not exited 1 s later; it could not "
            "reach host b (rank 1); killed mpirun and the processes it started here\n");
  const std::string child = testing::read_file(dir / "child");
  ASSERT_FALSE(child.empty());
  // Dead: gone, or a zombie not yet reaped by init (SIGKILL lands asynchronously: allow 5 s).
  CommandResult alive = testing::run_command(
      "for i in $(seq 50); do case $(ps -o stat= -p " + child +
      ") in ''|Z*) exit 1;; esac; sleep 0.1; done; ps -o stat=,args= -p " + child);
  EXPECT_EQ(alive.exit_code, 1) << "mpirun's child still alive: " << alive.out;
}

TEST_F(LaunchCli, ATerminalOnStderrGivesTheRanksAProgressBar) {
  TempDir dir;
  const std::string mpirun = fake_mpirun(dir, "echo \"progress=$PARTITA_PROGRESS\"");
  const std::string launch =
      binary() + " -q launch --mpirun " + mpirun + " -- train --parts " + p2();
  // script(1) gives the command a terminal; without it, stderr is a pipe.
  CommandResult tty = testing::run_command("script -qec '" + launch + "' /dev/null");
  EXPECT_EQ(tty.exit_code, 0) << tty.out;
  EXPECT_NE(tty.out.find("progress=bar"), std::string::npos) << tty.out;
  CommandResult pipe = testing::run_command(launch);
  EXPECT_EQ(pipe.out, "progress=\n");
}

TEST_F(LaunchCli, ForwardsSigtermToMpirun) {
  TempDir dir;
  const std::string mpirun = fake_mpirun(
      dir, "trap 'echo got TERM >&2; exit 7' TERM\ntouch " + dir / "ready" +
               "\nwhile :; do sleep 0.1; done");
  CommandResult r = testing::run_command(
      "{ " + binary() + " -q launch --mpirun " + mpirun + " -- train --parts " + p2() +
      " & pid=$!; while [ ! -e " + dir / "ready" + " ]; do sleep 0.1; done; kill -TERM $pid; "
      "wait $pid; echo rc=$?; }");
  // (The shell may also report its `sleep` as Terminated: the whole group gets the signal.)
  EXPECT_NE(r.out.find("got TERM\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 5), "rc=7\n") << r.out;
}

}  // namespace
}  // namespace partita::cli
