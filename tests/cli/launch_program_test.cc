// `partita launch` of infer and of programs that are not partita commands (a Python
// script): the pure plan. The built binary: launch_cli_test.cc.
#include <gtest/gtest.h>

#include "launch_plan.h"
#include "launch_test_util.h"

namespace partita::cli {
namespace {

// `partita launch -- infer ...`: checked and placed like train; its --out is rank 0's.
TEST(LaunchPlan, LaunchesInferWithItsPathsAbsolute) {
  LaunchFacts facts = base_facts();
  facts.parts = 2;
  facts.host_cores = 8;
  LaunchOptions options;
  options.command = {"infer", "--parts", "p2", "--checkpoint-dir", "ck", "--out=o"};
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=4 --bind-to core "
            "/opt/partita/bin/partita infer --parts /home/u/work/p2 --checkpoint-dir "
            "/home/u/work/ck --out=/home/u/work/o --torch-threads 4");
  options.procs_per_host = 3;
  expect_plan_error_usage(options, facts,
                          "launch: /home/u/work/p2 has 2 parts but 1 host x 3 procs-per-host = 3 "
                          "ranks; infer needs one rank per part (or a 1-part directory)");
  // infer has no --servers: it is the ranks' flag check that refuses it, not the plan.
  options.procs_per_host.reset();
  options.command.push_back("--servers=2");
  EXPECT_EQ(plan_launch(options, facts).ranks, 2);
}

// `partita launch -- python3 script.py ...`: hosts, ranks (from a --parts among its
// arguments), binding and forwarding as for partita's commands, plus PYTHONPATH.
TEST(LaunchPlan, RunsAProgramWithTheSameHostsRanksAndBinding) {
  LaunchFacts facts = base_facts();
  facts.parts = 2;
  facts.host_cores = 8;
  facts.log_level = LogLevel::kQuiet;  // partita's: not given to a program
  facts.env["PYTHONPATH"] = "build/python";
  facts.env["PARTITA_X"] = "1";
  LaunchOptions options;
  options.command = {"python3", "train.py", "--parts", "p2", "--lr", "0.1"};
  LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=4 --bind-to core -x "
            "OMP_NUM_THREADS -x PARTITA_X -x PYTHONPATH python3 /home/u/work/train.py --parts "
            "/home/u/work/p2 "
            "--lr 0.1");
  EXPECT_EQ(plan.ranks, 2);
  EXPECT_TRUE(plan.notes.empty());

  options.hosts = "a,b";
  plan = plan_launch(options, facts);
  EXPECT_EQ(
      shell_join(plan.argv),
      "mpirun -np 2 --host a:1,b:1 --map-by ppr:1:node:PE=8 --bind-to core " + kKeepalive +
          "-x OMP_NUM_THREADS -x PARTITA_X -x PYTHONPATH python3 /home/u/work/train.py --parts "
          "/home/u/work/p2 --lr 0.1");
  EXPECT_EQ(plan.rank_hosts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(plan.notes, std::vector<std::string>{
                            "launch: every host must see python3, /home/u/work/train.py and the "
                            "partition directory /home/u/work/p2 at the same paths"});
  options.hosts.clear();

  // The script is found past the interpreter's options; -m and -c run none.
  options.command = {"/usr/bin/python3", "-u", "-W", "ignore", "s.py", "x.py"};
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=4 --bind-to core -x "
            "OMP_NUM_THREADS -x PARTITA_X -x PYTHONPATH /usr/bin/python3 -u -W ignore "
            "/home/u/work/s.py x.py");
  options.command = {"python3", "-m", "pkg.train", "--parts=p2"};
  EXPECT_EQ(
      line_of(options, facts),
      "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=4 --bind-to core -x "
      "OMP_NUM_THREADS -x PARTITA_X -x PYTHONPATH python3 -m pkg.train --parts=/home/u/work/p2");
  // Any other program: a relative path is made absolute; its other arguments stay.
  options.command = {"./run.sh", "--checkpoint-dir", "ck", "--parts", "p2"};
  EXPECT_EQ(
      line_of(options, facts),
      "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=4 --bind-to core -x "
      "OMP_NUM_THREADS -x PARTITA_X -x PYTHONPATH /home/u/work/run.sh --checkpoint-dir ck --parts "
      "/home/u/work/p2");
  // The same rank rule as train: one rank per part.
  options.procs_per_host = 1;
  expect_plan_error_usage(options, facts,
                          "launch: /home/u/work/p2 has 2 parts but 1 host x 1 procs-per-host = 1 "
                          "ranks; ./run.sh needs one rank per part (or a 1-part directory)");
}

TEST(LaunchPlan, AProgramsParsesMayBeNoPartitionAndItMayBeMissingOnADryRun) {
  LaunchFacts facts = base_facts();
  facts.parts_error = "/home/u/work/x/partita.json: cannot open (No such file or directory)";
  LaunchOptions options;
  options.command = {"python3", "s.py", "--parts", "x"};
  options.procs_per_host = 3;
  LaunchPlan plan = plan_launch(options, facts);  // its --parts may mean something else
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 3 --host localhost:3 python3 /home/u/work/s.py --parts /home/u/work/x");
  EXPECT_EQ(plan.warnings,
            std::vector<std::string>{facts.parts_error +
                                     " (the --parts of python3: ranks from --procs-per-host)"});
  facts.parts_error.clear();
  facts.program_found = false;
  options.dry_run = true;
  options.command = {"pythn3", "s.py"};
  plan = plan_launch(options, facts);
  EXPECT_EQ(shell_join(plan.argv), "mpirun -np 3 --host localhost:3 pythn3 s.py");
  EXPECT_EQ(plan.warnings,
            std::vector<std::string>{"launch: 'pythn3' is neither a partita command (train, infer, "
                                     "sample-bench, partition, generate) nor a program on PATH"});
}

}  // namespace
}  // namespace partita::cli
