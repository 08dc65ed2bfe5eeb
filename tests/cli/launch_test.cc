// `partita launch`: the pure plan (argv for every mode, forwarding, quoting, binding,
// each validation message). infer and other programs: launch_program_test.cc. The built
// binary: launch_cli_test.cc.
#include <gtest/gtest.h>

#include <filesystem>

#include "helpers/test_paths.h"
#include "launch_plan.h"
#include "launch_test_util.h"
#include "partita/core/error.h"

namespace partita::cli {
namespace {

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

// --device travels unchanged to every rank, which picks its own GPU (device_flag.h); launch
// says how several ranks of a host will use the GPUs. One rank per GPU on a partitioned
// directory also maps the whole topology on every rank (--topology full).
TEST(LaunchPlan, DevicePassesThroughAndIsExplained) {
  LaunchFacts facts = base_facts();
  facts.parts = 4;
  LaunchOptions options = train_on("p4");
  options.command.insert(options.command.end(), {"--device", "cuda"});
  LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 4 --host localhost:4 /opt/partita/bin/partita train --parts "
            "/home/u/work/p4 --epochs 3 --device cuda --topology full");
  EXPECT_EQ(plan.notes,
            (std::vector<std::string>{
                "launch: --device cuda: every rank maps every part's in-edges (--topology "
                "full) and samples on its GPU; feature rows stay with their owners",
                "launch: --device cuda: the 4 ranks of a host take its GPUs in blocks by local "
                "rank (docs/launch.md, GPUs)"}));
  options.command.back() = "cuda:1";
  EXPECT_EQ(plan_launch(options, facts).notes,
            std::vector<std::string>{"launch: --device cuda:1: the 4 ranks of a host share that "
                                     "one GPU"});
  options.command.back() = "cpu";
  EXPECT_TRUE(plan_launch(options, facts).notes.empty());
  facts.parts = 1;
  LaunchOptions one = train_on("p1");
  one.command.insert(one.command.end(), {"--device=cuda"});
  EXPECT_TRUE(plan_launch(one, facts).notes.empty()) << "one rank: nothing to explain";
}

// A --topology given is the user's: launch adds none (any spelling of the flag).
TEST(LaunchPlan, TopologyGivenIsKept) {
  LaunchFacts facts = base_facts();
  facts.parts = 2;
  for (const std::vector<std::string>& flag :
       {std::vector<std::string>{"--topology", "owned"}, {"--topology=owned"}}) {
    LaunchOptions options = train_on("p2");
    options.command.insert(options.command.end(), {"--device", "cuda"});
    options.command.insert(options.command.end(), flag.begin(), flag.end());
    const std::string line = line_of(options, facts);
    EXPECT_EQ(line.find("full"), std::string::npos) << line;
  }
  LaunchOptions bench = train_on("p2");
  bench.command[0] = "sample-bench";
  bench.command.insert(bench.command.end(), {"--device", "cuda"});
  EXPECT_EQ(line_of(bench, facts).find("--topology"), std::string::npos) << "train only";
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
  EXPECT_EQ(line_of(options, facts), "mpirun -np 3 --host a:1,b:1,c:1 " + kKeepalive +
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
                          "launch: cannot launch `launch` itself; give train, infer, "
                          "sample-bench, partition, generate or a program after --");
  expect_plan_error_usage(with({"info", "p"}), facts,
                          "launch: 'info' is not a distributed command; launch runs train, "
                          "infer, sample-bench, partition, generate or a program (run `partita "
                          "info` directly)");
  expect_plan_error_usage(with({"--help"}), facts,
                          "launch: '--help' before the command; only -q/--quiet/-v/--verbose "
                          "may come before train, infer, sample-bench, partition, generate");
  // A word that is no partita command is a program; one that is not found is refused.
  LaunchFacts missing = facts;
  missing.program_found = false;
  expect_plan_error_usage(with({"trian", "--parts", "p"}), missing,
                          "launch: 'trian' is neither a partita command (train, infer, "
                          "sample-bench, partition, generate) nor a program on PATH");
  expect_throw<Error>([&] { plan_launch(with({"./run.sh"}), missing); },
                      "launch: ./run.sh: not an executable file");
  expect_plan_error_usage(with({"-q", "python3", "s.py"}), facts,
                          "launch: 'python3' is not a partita command (train, infer, "
                          "sample-bench, partition, generate), and -q/-v before a program are "
                          "partita's");
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
  EXPECT_EQ(shell_join(plan.argv), "mpirun -np 4 --host a:2,b:2 " + kKeepalive +
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
  EXPECT_EQ(
      line_of(options, facts),
      "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=4 --bind-to core "
      "/opt/partita/bin/partita train --parts /data/p2 --epochs 3 --torch-threads 4 --threads 1");
  facts.host_cores = 3;  // 3 cores for 2 ranks: one each, the third idle
  EXPECT_EQ(
      line_of(options, facts),
      "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=1 --bind-to core "
      "/opt/partita/bin/partita train --parts /data/p2 --epochs 3 --torch-threads 1 --threads 1");
  facts.host_cores = 1;  // fewer cores than ranks: not bound
  EXPECT_EQ(
      line_of(options, facts),
      "mpirun -np 2 --host localhost:2 --map-by ppr:2:node --bind-to none "
      "/opt/partita/bin/partita train --parts /data/p2 --epochs 3 --torch-threads 1 --threads 1");
  options.cores_per_host = 4;  // the user knows better than this host
  EXPECT_EQ(
      line_of(options, facts),
      "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=2 --bind-to core "
      "/opt/partita/bin/partita train --parts /data/p2 --epochs 3 --torch-threads 2 --threads 1");
  options.bind = Bind::kSocket;
  EXPECT_EQ(
      line_of(options, facts),
      "mpirun -np 2 --host localhost:2 --map-by ppr:2:node --bind-to socket "
      "/opt/partita/bin/partita train --parts /data/p2 --epochs 3 --torch-threads 2 --threads 1");
  options.bind = Bind::kNone;
  EXPECT_EQ(
      line_of(options, facts),
      "mpirun -np 2 --host localhost:2 --map-by ppr:2:node --bind-to none "
      "/opt/partita/bin/partita train --parts /data/p2 --epochs 3 --torch-threads 2 --threads 1");
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
                "/opt/partita/bin/partita train --parts /data/p4 --epochs 3 --torch-threads 2 "
                "--threads 1");
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
  options.command = {"train",
                     "--parts",
                     "p2",
                     "--checkpoint-dir",
                     "../ck",
                     "--metrics-out=m/x.jsonl",
                     "--epochs",
                     "2",
                     "--metrics-out",
                     "/abs/m.jsonl"};
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 /opt/partita/bin/partita train --parts "
            "/home/u/work/p2 --checkpoint-dir /home/u/ck --metrics-out=/home/u/work/m/x.jsonl "
            "--epochs 2 --metrics-out /abs/m.jsonl");
}

// partition runs across ranks too (partition/pipeline.h): every rank reads --dataset
// and writes --out, so both are made absolute; the rank count is launch's, not --num-parts.
TEST(LaunchPlan, PartitionRunsOnTheRanksWithItsPathsAbsolute) {
  LaunchFacts facts = base_facts();
  LaunchOptions options;
  options.procs_per_host = 3;
  options.command = {"partition", "--dataset", "ds", "--out", "../p4", "--num-parts", "4"};
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 3 --host localhost:3 /opt/partita/bin/partita partition --dataset "
            "/home/u/work/ds --out /home/u/p4 --num-parts 4");
}

// generate --layout chunked runs across ranks too (each rank writes its own chunks): --out
// is made absolute.
TEST(LaunchPlan, GenerateRunsOnTheRanksWithItsOutAbsolute) {
  LaunchFacts facts = base_facts();
  LaunchOptions options;
  options.procs_per_host = 2;
  options.command = {"generate", "--layout", "chunked", "--nodes", "100", "--out", "g"};
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 /opt/partita/bin/partita generate --layout chunked "
            "--nodes 100 --out /home/u/work/g");
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
  EXPECT_EQ(plan_launch(options, facts).rank_hosts, (std::vector<std::string>{"a", "a", "b", "b"}));
  options.hosts.clear();
  options.hostfile = "h";
  facts.hostfile_text = "x slots=2\ny slots=2\n";
  EXPECT_EQ(plan_launch(options, facts).rank_hosts, (std::vector<std::string>{"x", "x", "y", "y"}));
  options.hostfile.clear();
  facts.env["SLURM_JOB_ID"] = "7";
  facts.env["SLURM_JOB_NUM_NODES"] = "2";
  EXPECT_TRUE(plan_launch(options, facts).rank_hosts.empty());
}

TEST(LaunchPlan, RecognizesFailureLines) {
  EXPECT_TRUE(is_failure_line("error: rank 0: rank 1 did not answer a ping within 5 s"));
  EXPECT_TRUE(
      is_failure_line("mpirun noticed that process rank 1 with PID 0 on node b exited "
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

}  // namespace
}  // namespace partita::cli

namespace partita::cli {
namespace {

// Server-client mode: the ranks are the user's (servers + trainers), more than the parts.
TEST(LaunchPlan, ServersTakeTheFirstRanksAndTrainersTheRest) {
  LaunchFacts facts = base_facts();
  facts.parts = 2;
  const auto with_servers = [](const std::string& servers, std::optional<int> ppn) {
    LaunchOptions options = train_on("/data/p2");
    options.command.push_back(servers);
    options.procs_per_host = ppn;
    return options;
  };
  const LaunchPlan plan = plan_launch(with_servers("--servers=2", 4), facts);
  EXPECT_EQ(plan.ranks, 4);
  EXPECT_NE(shell_join(plan.argv).find("mpirun -np 4 "), std::string::npos)
      << shell_join(plan.argv);
  EXPECT_NE(shell_join(plan.argv).find("--servers=2"), std::string::npos);
  expect_plan_error_usage(with_servers("--servers=2", std::nullopt), facts,
                          "launch: with --servers, give --procs-per-host: the ranks per host, "
                          "servers and trainers together (the first 2 ranks serve)");
  expect_plan_error_usage(with_servers("--servers=3", 4), facts,
                          "launch: --servers 3: /data/p2 has 2 parts, one server per part");
  expect_plan_error_usage(with_servers("--servers=2", 2), facts,
                          "launch: 1 host x 2 procs-per-host = 2 ranks leaves no rank to train "
                          "beside the 2 servers");
  expect_plan_error_usage(with_servers("--servers=x", 4), facts,
                          "--servers: 'x' is not a count of server ranks");
  expect_plan_error_usage(with_servers("--servers=02", 4), facts,
                          "--servers: '02' is not a count of server ranks");
}

}  // namespace
}  // namespace partita::cli

namespace partita::cli {
namespace {

// MPI_ABORT's banner may reach launch before the aborting rank's own line; the rank's line
// names the lost peer, so it is the one kept.
TEST(LaunchPlan, ARankErrorLineReplacesOpenMpisBanner) {
  const std::string banner = "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD";
  const std::string rank0 =
      "error: rank 0: rank 1 did not answer within 10 s (call_all from rank 0)";
  EXPECT_TRUE(replaces_failure_line("", banner));
  EXPECT_TRUE(replaces_failure_line(banner, rank0));
  EXPECT_FALSE(replaces_failure_line(rank0, banner));
  EXPECT_FALSE(replaces_failure_line(rank0, "error: rank 1: something else"));
  LaunchPlan plan;
  plan.rank_hosts = {"127.1.0.1", "127.1.0.2"};
  EXPECT_EQ(stuck_message(plan, rank0, 10),
            "launch: the job failed but mpirun had not exited 10 s later; it could not reach "
            "host 127.1.0.2 (rank 1); killed mpirun and the processes it started here");
}

}  // namespace
}  // namespace partita::cli
