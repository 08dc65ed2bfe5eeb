// `partita launch`, the built binary: --dry-run lines, exit codes, supervision of mpirun
// (with a stand-in script for it) and real mpirun runs on this host.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "helpers/test_paths.h"
#include "launch_test_util.h"

namespace partita::cli {
namespace {

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
  for (const char* flag :
       {"--hosts", "--hostfile", "--procs-per-host", "--oversubscribe", "--mpirun", "--env",
        "--dry-run", "--bind", "--cores-per-host", "--teardown-timeout"})
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
                       kKeepalive + real_binary() + " train --parts " + dir / "X" +
                       " --torch-threads 4 --threads 1\n");
  CommandResult all = partita_clean_env(
      "launch --dry-run --hosts a,b --procs-per-host 2 -- "
      "train --parts " +
      dir / "X");
  EXPECT_EQ(all.exit_code, 0);
  EXPECT_NE(all.out.find("warning: " + dir / "X"), std::string::npos) << all.out;

  // With a real 2-part directory: ranks from its parts; the whole output is exact, and
  // the global flags after the command go to the launched command.
  CommandResult exact = partita_clean_env(
      "launch --dry-run --hosts a,b --bind socket --cores-per-host 2 -- train --parts " + p2() +
      " -q");
  EXPECT_EQ(exact.exit_code, 0);
  EXPECT_EQ(exact.out,
            "launch: layout: 1 rank per host x 2 torch threads + 1 sampler thread (2 "
            "cores, 1 socket; ranks from parts), on each of 2 hosts; one rank per "
            "part (--num-parts 2)\n"
            "launch: every host must see " +
                real_binary() + " and the partition directory " + p2() +
                " at the same paths\nmpirun -np 2 --host a:1,b:1 --map-by "
                "ppr:1:node --bind-to socket " +
                kKeepalive + real_binary() + " train --parts " + p2() +
                " -q --torch-threads 2 --threads 1\n");
}

TEST_F(LaunchCli, DryRunForwardsVariablesQuotesAndPassesQuiet) {
  const std::string spaced = *dir_ / "my parts";
  std::filesystem::remove_all(spaced);
  std::filesystem::copy(p2(), spaced, std::filesystem::copy_options::recursive);
  CommandResult r = testing::run_command(
      "env -i PATH=/usr/bin:/bin PARTITA_DEMO=1 OMP_NUM_THREADS=2 " + binary() +
      " -q launch --dry-run --bind none --cores-per-host 2 -- sample-bench --parts '" + spaced +
      "' --fanouts '5, 5'");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node --bind-to none -x "
            "OMP_NUM_THREADS -x PARTITA_DEMO " +
                real_binary() + " -q sample-bench --parts '" + spaced +
                "' --fanouts '5, 5' --threads 1\n");
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
                    "error: launch: cannot launch `launch` itself; give train, infer, "
                    "sample-bench, partition, generate or a program after --");
  expect_only_error(partita("launch --dry-run -- info x"), 2,
                    "error: launch: 'info' is not a distributed command; launch runs "
                    "train, infer, sample-bench, partition, generate or a program (run "
                    "`partita info` directly)");
  expect_only_error(partita("launch --dry-run --hosts a,a -- train"), 2,
                    "error: --hosts: 'a' listed twice");
  expect_only_error(partita("launch --dry-run --hosts a --parts " + p2()), 2,
                    "error: launch: unknown flag --parts (the command to launch goes after "
                    "--; see partita launch --help)");
  expect_only_error(partita("launch --dry-run --hosts a train --parts " + p2() + " --epochs 2"), 2,
                    "error: launch: put -- before the command to launch (partita launch "
                    "[options] -- train ...); not a launch flag: --parts --epochs");
  expect_only_error(partita("launch --procs-per-host two -- train"), 2,
                    "error: --procs-per-host: 'two' is not a decimal integer");
  expect_only_error(partita("launch --bogus -x -- train"), 2,
                    "error: launch: unknown flags --bogus -x (the command to launch goes after "
                    "--; see partita launch --help)");
  expect_only_error(partita("launch --hosts"), 2, "error: --hosts: needs a value (H1,H2,...)");
  // The command's flags are checked before mpirun starts; launch's flags after -- are named.
  expect_only_error(partita("launch --dry-run -- train --parts " + p2() + " --epoch 3"), 2,
                    "error: --epoch: unknown flag of train; did you mean --epochs? (see partita "
                    "train --help)");
  // -q/--quiet after the command is the command's own (launch takes it too): not misnamed.
  expect_only_error(partita("launch --dry-run -- train --parts " + p2() + " --quiet --epoch 3"), 2,
                    "error: --epoch: unknown flag of train; did you mean --epochs? (see partita "
                    "train --help)");
  expect_only_error(partita("launch --dry-run -- train --parts " + p2() + " --hosts x"), 2,
                    "error: --hosts: a flag of launch, given after the command (where it "
                    "belongs to train); put launch's flags before --");
  expect_only_error(partita("launch --dry-run -- sample-bench --parts " + p2() + " --lr 1"), 2,
                    "error: --lr: unknown flag of sample-bench (see partita sample-bench --help)");
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
            "--mpirun)\nlaunch: layout: 2 ranks per host x 1 torch thread + 1 sampler thread "
            "(1 core, 1 socket; ranks from parts); one rank per part (--num-parts 2); the "
            "rule's layout runs 1 rank: use a 1-part directory, unless one rank cannot hold "
            "the graph\nmpirun -np 2 --host localhost:2 --map-by ppr:2:node "
            "--bind-to none " +
                real_binary() + " train --parts " + p2() + " --torch-threads 1 --threads 1\n");
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
      dir,
      "trap '' TERM\necho 'error: rank 0: rank 1 did not answer a ping within 5 s' >&2\n"
      "sleep 300 & echo $! > " +
          dir / "child" + "\nwait");
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
  const std::string mpirun = fake_mpirun(dir, "trap 'echo got TERM >&2; exit 7' TERM\ntouch " +
                                                  dir / "ready" + "\nwhile :; do sleep 0.1; done");
  CommandResult r = testing::run_command("{ " + binary() + " -q launch --mpirun " + mpirun +
                                         " -- train --parts " + p2() + " & pid=$!; while [ ! -e " +
                                         dir / "ready" +
                                         " ]; do sleep 0.1; done; kill -TERM $pid; "
                                         "wait $pid; echo rc=$?; }");
  // (The shell may also report its `sleep` as Terminated: the whole group gets the signal.)
  EXPECT_NE(r.out.find("got TERM\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 5), "rc=7\n") << r.out;
}

}  // namespace
}  // namespace partita::cli

namespace partita::cli {
namespace {

using testing::CommandResult;
using testing::TempDir;

TEST_F(LaunchCli, DryRunLaunchesInferWithItsPathsAbsolute) {
  CommandResult r = partita_clean_env(
      "launch --dry-run --bind none --cores-per-host 2 -- "
      "infer --parts " +
      p2() + " --checkpoint-dir ck --out inf");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(r.out,
            "launch: layout: 2 ranks per host x 1 torch thread (2 cores, 1 socket; ranks "
            "from parts); one rank per part (--num-parts 2); the rule's layout runs 1 rank: "
            "use a 1-part directory, unless one rank cannot hold the graph\n"
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node --bind-to none " +
                real_binary() + " infer --parts " + p2() + " --checkpoint-dir " + cwd +
                "/ck --out " + cwd + "/inf --torch-threads 1\n");
  // infer's flags are checked before mpirun, as train's.
  expect_only_error(partita("launch --dry-run -- infer --parts " + p2() +
                            " --checkpoint-dir ck --out inf --epochs 3"),
                    2, "error: --epochs: unknown flag of infer (see partita infer --help)");
}

// A short training run with checkpoints, then full-neighbourhood inference from them, both
// on 2 local ranks through launch.
TEST_F(LaunchCli, RunsTrainThenInferOnTwoRanks) {
  TempDir dir;
  CommandResult train = partita("-q launch -- train --parts " + p2() +
                                " --epochs 1 --fanouts 3,3 --batch-size 256 --timeout 60 "
                                "--checkpoint-dir " +
                                dir / "ck");
  ASSERT_EQ(train.exit_code, 0) << train.out;
  CommandResult infer = partita("-q launch -- infer --parts " + p2() + " --checkpoint-dir " +
                                dir / "ck" + " --out " + dir / "inf" + " --timeout 60");
  ASSERT_EQ(infer.exit_code, 0) << infer.out;
  EXPECT_NE(infer.out.find("test_acc="), std::string::npos) << infer.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "inf/embeddings.npy")) << infer.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "inf/predictions.npy")) << infer.out;
}

// `partita launch -- python3 script.py`: every rank runs the script, with the launcher's
// PYTHONPATH. Each rank writes its line into a file of its own: mpirun may cut the ranks'
// stdout lines apart.
TEST_F(LaunchCli, RunsAPythonScriptOnEveryRank) {
  TempDir dir;
  testing::write_file(dir / "ranks.py",
                      "import os, sys\n"
                      "rank = os.environ['OMPI_COMM_WORLD_RANK']\n"
                      "with open(os.path.join(os.path.dirname(sys.argv[0]), 'rank' + rank), "
                      "'w') as f:\n"
                      "    f.write('rank=%s of %s pythonpath=%s args=%s\\n' % (rank, "
                      "os.environ['OMPI_COMM_WORLD_SIZE'], os.environ.get('PYTHONPATH'), "
                      "' '.join(sys.argv[1:])))\n");
  const std::string env = "env PYTHONPATH=" + dir / "pkg" + " ";
  // The ranks come from the script's --parts as for train: 2 parts, 2 ranks.
  CommandResult dry =
      testing::run_command("{ " + env + binary() + " launch --dry-run --bind none -- python3 " +
                           dir / "ranks.py" + " --parts " + p2() + " --lr 0.1 2>/dev/null; }");
  EXPECT_EQ(dry.exit_code, 0) << dry.out;
  EXPECT_NE(dry.out.find("mpirun -np 2 --host localhost:2 --map-by ppr:2:node --bind-to none "),
            std::string::npos)
      << dry.out;
  EXPECT_NE(dry.out.find("-x PYTHONPATH python3 " + dir / "ranks.py" + " --parts " + p2() +
                         " --lr 0.1\n"),
            std::string::npos)
      << dry.out;
  CommandResult r = testing::run_command(env + binary() + " -q launch -- python3 " +
                                         dir / "ranks.py" + " --parts " + p2() + " --lr 0.1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (int rank : {0, 1})
    EXPECT_EQ(testing::read_file(dir / ("rank" + std::to_string(rank))),
              "rank=" + std::to_string(rank) + " of 2 pythonpath=" + dir / "pkg" +
                  " args=--parts " + p2() + " --lr 0.1\n")
        << r.out;
  // Not found: refused before mpirun.
  expect_only_error(partita("launch -- trian --parts " + p2()), 2,
                    "error: launch: 'trian' is neither a partita command (train, infer, "
                    "sample-bench, partition, generate) nor a program on PATH");
}

// A rank that fails prints one line: launch leaves out Open MPI's notes that only restate it.
TEST_F(LaunchCli, AFailingRankPrintsOneLine) {
  TempDir dir;
  testing::write_file(dir / "fail.py",
                      "import os, sys\n"
                      "if os.environ['OMPI_COMM_WORLD_RANK'] == '0':\n"
                      "    print('error: rank 0 gave up', file=sys.stderr, flush=True)\n"
                      "sys.exit(2)\n");
  CommandResult r = partita("-q launch --procs-per-host 2 -- python3 " + dir / "fail.py");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.out, "error: rank 0 gave up\n");
  // With no rank's line, mpirun's note is all there is to say: it stays.
  testing::write_file(dir / "quiet.py", "import sys\nsys.exit(3)\n");
  CommandResult quiet = partita("-q launch --procs-per-host 2 -- python3 " + dir / "quiet.py");
  EXPECT_EQ(quiet.exit_code, 3) << quiet.out;
  EXPECT_NE(quiet.out.find("Primary job  terminated normally, but 1 process returned"),
            std::string::npos)
      << quiet.out;
}

}  // namespace
}  // namespace partita::cli
