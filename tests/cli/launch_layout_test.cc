// The layout rule of `partita launch` (launch_layout.h): cores, sockets and parts -> ranks
// per host and threads per rank; and the GPU of each local rank.
#include "launch_layout.h"

#include <gtest/gtest.h>

#include "launch_test_util.h"

namespace partita::cli {
namespace {

LayoutRequest on(int cores, int sockets, int parts) {
  LayoutRequest request;
  request.cores = cores;
  request.sockets = sockets;
  request.parts = parts;
  return request;
}

// The rule follows the measurements in docs/launch.md: on 16 cores (issue 40) one rank of
// 16 threads was the fastest layout and 16 ranks of 1 thread the slowest; on 2 cores one
// rank of 2 threads beat 2 ranks of 1.
TEST(LaunchLayout, RuleRunsOneRankPerSocket) {
  EXPECT_EQ(rule_ranks_per_host(1, 1), 1);
  EXPECT_EQ(rule_ranks_per_host(2, 1), 1);
  EXPECT_EQ(rule_ranks_per_host(16, 1), 1);
  EXPECT_EQ(rule_ranks_per_host(64, 1), 1);
  EXPECT_EQ(rule_ranks_per_host(128, 2), 2);
  EXPECT_EQ(rule_ranks_per_host(24, 4), 4);
}

TEST(LaunchLayout, RuleNeverRunsMoreRanksThanCores) {
  EXPECT_EQ(rule_ranks_per_host(2, 2), 2);
  EXPECT_EQ(rule_ranks_per_host(1, 3), 1);  // more sockets than cores: clamped
  EXPECT_EQ(rule_ranks_per_host(0, 0), 1);
}

TEST(LaunchLayout, ThreadsFollowTrainsAutomaticRule) {
  EXPECT_EQ(rule_sampler_threads(1), 1);
  EXPECT_EQ(rule_sampler_threads(15), 1);
  EXPECT_EQ(rule_sampler_threads(16), 2);
  EXPECT_EQ(rule_sampler_threads(64), 4);
  EXPECT_EQ(rule_torch_threads(1, 1), 1);  // 4 cores or fewer: all of them for torch
  EXPECT_EQ(rule_torch_threads(4, 1), 4);
  EXPECT_EQ(rule_torch_threads(8, 1), 7);
  EXPECT_EQ(rule_torch_threads(16, 2), 14);
}

TEST(LaunchLayout, OnePartDirectoryRunsOneRankWithEveryCore) {
  const Layout layout = choose_layout(on(16, 1, 1));
  EXPECT_EQ(layout.ranks_per_host, 1);
  EXPECT_EQ(layout.cores_per_rank, 16);
  EXPECT_EQ(layout.torch_threads, 14);
  EXPECT_EQ(layout.sampler_threads, 2);
  EXPECT_FALSE(layout.replicated);
  EXPECT_EQ(layout.ranks_from, "rule");

  const Layout two = choose_layout(on(2, 1, 1));  // this project's machine
  EXPECT_EQ(two.ranks_per_host, 1);
  EXPECT_EQ(two.torch_threads, 2);
  EXPECT_EQ(two.sampler_threads, 1);

  const Layout sockets = choose_layout(on(64, 2, 1));  // one rank per socket: replicated
  EXPECT_EQ(sockets.ranks_per_host, 2);
  EXPECT_EQ(sockets.cores_per_rank, 32);
  EXPECT_EQ(sockets.sampler_threads, 4);
  EXPECT_EQ(sockets.torch_threads, 28);
  EXPECT_TRUE(sockets.replicated);

  LayoutRequest hosts = on(8, 1, 1);  // one rank on each of 3 hosts: replicated too
  hosts.hosts = 3;
  EXPECT_TRUE(choose_layout(hosts).replicated);
}

TEST(LaunchLayout, PartsFixTheRanksAndTheThreadsShareTheCores) {
  Layout layout = choose_layout(on(16, 1, 2));  // 2 parts: 2 ranks of 8 cores
  EXPECT_EQ(layout.ranks_per_host, 2);
  EXPECT_EQ(layout.ranks_from, "parts");
  EXPECT_EQ(layout.cores_per_rank, 8);
  EXPECT_EQ(layout.sampler_threads, 1);
  EXPECT_EQ(layout.torch_threads, 7);
  EXPECT_FALSE(layout.replicated);
  EXPECT_EQ(layout.rule_ranks_per_host, 1);

  LayoutRequest two_hosts = on(16, 1, 8);
  two_hosts.hosts = 2;
  layout = choose_layout(two_hosts);
  EXPECT_EQ(layout.ranks_per_host, 4);
  EXPECT_EQ(layout.cores_per_rank, 4);
}

TEST(LaunchLayout, OverridesWin) {
  LayoutRequest request = on(16, 1, 1);
  request.ranks_per_host = 4;
  request.torch_threads = 2;
  request.threads = 3;
  const Layout layout = choose_layout(request);
  EXPECT_EQ(layout.ranks_per_host, 4);
  EXPECT_EQ(layout.ranks_from, "procs-per-host");
  EXPECT_EQ(layout.cores_per_rank, 4);
  EXPECT_EQ(layout.torch_threads, 2);
  EXPECT_EQ(layout.sampler_threads, 3);
  EXPECT_TRUE(layout.replicated);
}

TEST(LaunchLayout, NoPartitionOrUnknownCoresKeepsOneRank) {
  Layout layout = choose_layout(on(16, 1, 0));
  EXPECT_EQ(layout.ranks_per_host, 1);
  EXPECT_EQ(layout.ranks_from, "default");
  EXPECT_EQ(layout.torch_threads, 14);
  layout = choose_layout(on(0, 1, 1));
  EXPECT_EQ(layout.ranks_per_host, 1);
  EXPECT_EQ(layout.torch_threads, 0);  // the rank decides
  EXPECT_FALSE(layout.replicated);
}

// Every command gets the threads it would pick by itself on its share of the cores: the
// printed layout is the one that runs.
TEST(LaunchLayout, EachWorkloadGetsItsOwnThreadFlags) {
  using Flags = std::vector<std::pair<std::string, int>>;
  LayoutRequest request = on(16, 1, 2);  // 2 parts: 8 cores per rank
  request.workload = Workload::kTrain;
  EXPECT_EQ(layout_thread_flags(choose_layout(request)),
            (Flags{{"--torch-threads", 7}, {"--threads", 1}}));
  request.workload = Workload::kInfer;  // no sampler threads: every core for torch
  EXPECT_EQ(layout_thread_flags(choose_layout(request)), (Flags{{"--torch-threads", 8}}));
  request.workload = Workload::kSampleBench;
  EXPECT_EQ(layout_thread_flags(choose_layout(request)), (Flags{{"--threads", 1}}));
  request.workload = Workload::kProgram;  // OMP_NUM_THREADS instead (launch_plan)
  EXPECT_EQ(layout_thread_flags(choose_layout(request)), Flags{});
  EXPECT_EQ(choose_layout(request).torch_threads, 7);

  // partition and generate: --threads is their worker threads, all of the rank's cores
  // (issue 37: launch bound each rank to 2 cores and passed --threads 1).
  LayoutRequest workers = on(2, 1, 0);
  workers.workload = Workload::kWorkers;
  Layout layout = choose_layout(workers);
  EXPECT_EQ(layout.ranks_per_host, 1);
  EXPECT_EQ(layout_thread_flags(layout), (Flags{{"--threads", 2}}));
  workers.ranks_per_host = 2;
  EXPECT_EQ(layout_thread_flags(choose_layout(workers)), (Flags{{"--threads", 1}}));
  workers.threads = 5;  // given: as given
  EXPECT_EQ(layout_thread_flags(choose_layout(workers)), (Flags{{"--threads", 5}}));
  workers.cores = 0;  // unknown cores and nothing given: the rank decides
  workers.threads.reset();
  EXPECT_EQ(layout_thread_flags(choose_layout(workers)), Flags{});
}

TEST(LaunchLayout, DescribesItselfInOneLine) {
  EXPECT_EQ(describe_layout(choose_layout(on(2, 1, 1)), 1),
            "launch: layout: 1 rank per host x 2 torch threads + 1 sampler thread (2 cores, 1 "
            "socket; ranks from rule)");
  EXPECT_EQ(describe_layout(choose_layout(on(0, 1, 0)), 3),
            "launch: layout: 1 rank per host x automatic torch threads + automatic sampler "
            "threads (cores unknown; ranks from default), on each of 3 hosts");
  LayoutRequest workers = on(4, 1, 0);
  workers.workload = Workload::kWorkers;
  EXPECT_EQ(describe_layout(choose_layout(workers), 1),
            "launch: layout: 1 rank per host x 4 threads (4 cores, 1 socket; ranks from default)");
  LayoutRequest infer = on(4, 1, 2);
  infer.workload = Workload::kInfer;
  EXPECT_EQ(describe_layout(choose_layout(infer), 1),
            "launch: layout: 2 ranks per host x 2 torch threads (4 cores, 1 socket; ranks from "
            "parts)");
}

TEST(LaunchLayout, VisibleGpusFollowCudaVisibleDevices) {
  EXPECT_EQ(visible_gpus(std::nullopt, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(visible_gpus(std::nullopt, 0), std::vector<int>{});
  EXPECT_EQ(visible_gpus(std::string("2,3"), 4), (std::vector<int>{0, 1}));
  EXPECT_EQ(visible_gpus(std::string(""), 4), std::vector<int>{});
  EXPECT_EQ(visible_gpus(std::string("1,7,2"), 4), std::vector<int>{0});  // stops at 7
  EXPECT_EQ(visible_gpus(std::string("GPU-8a1b,MIG-3c"), 1), (std::vector<int>{0, 1}));
  EXPECT_EQ(visible_gpus(std::string("0,,1"), 2), std::vector<int>{0});
}

TEST(LaunchLayout, LocalRanksGetGpusInContiguousBlocks) {
  EXPECT_EQ(gpu_for_local_rank(0, 1, 0), -1);  // no GPU
  std::vector<int> got;
  for (int r = 0; r < 8; ++r) got.push_back(gpu_for_local_rank(r, 8, 4));
  EXPECT_EQ(got, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  got.clear();
  for (int r = 0; r < 4; ++r) got.push_back(gpu_for_local_rank(r, 4, 4));
  EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 3}));
  got.clear();
  for (int r = 0; r < 3; ++r) got.push_back(gpu_for_local_rank(r, 3, 2));
  EXPECT_EQ(got, (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(gpu_for_local_rank(0, 2, 8), 0);  // fewer ranks than GPUs: spread out
  EXPECT_EQ(gpu_for_local_rank(1, 2, 8), 4);
}

// The plan: the layout reaches mpirun's binding, the command's flags and the printed line.
TEST(LaunchPlan, OnePartDirectoryRunsOneRankWithEveryCore) {
  LaunchFacts facts = base_facts();
  facts.parts = 1;
  facts.host_cores = 16;
  const LaunchPlan plan = plan_launch(train_on("/p1"), facts);
  EXPECT_EQ(plan.ranks, 1);
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 1 --host localhost:1 --map-by ppr:1:node:PE=16 --bind-to core " +
                std::string(kBin) + " train --parts /p1 --epochs 3 --torch-threads 14 --threads 2");
  EXPECT_EQ(plan.layout_line,
            "launch: layout: 1 rank per host x 14 torch threads + 2 sampler threads (16 cores, "
            "1 socket; ranks from rule); 1 part, 1 rank");
}

TEST(LaunchPlan, OnePartDirectoryOnTwoHostsIsReplicated) {
  LaunchFacts facts = base_facts();
  facts.parts = 1;
  facts.host_cores = 8;
  LaunchOptions options = train_on("/p1");
  options.hosts = "a,b";
  const LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(plan.ranks, 2);
  EXPECT_EQ(plan.layout_line,
            "launch: layout: 1 rank per host x 7 torch threads + 1 sampler thread (8 cores, 1 "
            "socket; ranks from rule), on each of 2 hosts; replicated 1-part mode: every rank "
            "holds the whole graph");
}

TEST(LaunchPlan, PartsFixTheRanksAndTheLineNamesTheRulesNumParts) {
  LaunchFacts facts = base_facts();
  facts.parts = 2;
  facts.host_cores = 16;
  const LaunchPlan plan = plan_launch(train_on("/p2"), facts);
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=8 --bind-to core " +
                std::string(kBin) + " train --parts /p2 --epochs 3 --torch-threads 7 --threads 1");
  EXPECT_EQ(plan.layout_line,
            "launch: layout: 2 ranks per host x 7 torch threads + 1 sampler thread (16 cores, 1 "
            "socket; ranks from parts); one rank per part (--num-parts 2); the rule's layout "
            "runs 1 rank: use a 1-part directory, unless one rank cannot hold the graph");
}

TEST(LaunchPlan, TheCommandsOwnThreadFlagsWin) {
  LaunchFacts facts = base_facts();
  facts.parts = 2;
  facts.host_cores = 8;
  LaunchOptions options = train_on("/p2");
  options.command.insert(options.command.end(), {"--torch-threads=2"});
  options.sampler_threads = 2;  // launch --threads 2
  const LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=4 --bind-to core " +
                std::string(kBin) + " train --parts /p2 --epochs 3 --torch-threads=2 --threads 2");
  EXPECT_EQ(plan.layout.torch_threads, 2);
}

TEST(LaunchPlan, SocketsGetTheSameRanksEach) {
  LaunchFacts facts = base_facts();
  facts.parts = 1;
  facts.host_cores = 32;
  facts.host_sockets = 2;
  const LaunchPlan plan = plan_launch(train_on("/p1"), facts);
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 2 --host localhost:2 --map-by ppr:1:socket:PE=16 --bind-to core " +
                std::string(kBin) + " train --parts /p1 --epochs 3 --torch-threads 14 --threads 2");
}

TEST(LaunchPlan, AProgramGetsItsTorchThreadsAsOmpNumThreads) {
  LaunchFacts facts = base_facts();
  facts.parts = 1;
  facts.host_cores = 4;
  LaunchOptions options;
  options.command = {"python3", "train.py", "--parts", "/p1"};
  LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(plan.env.at("OMP_NUM_THREADS"), "4");
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 1 --host localhost:1 --map-by ppr:1:node:PE=4 --bind-to core -x "
            "OMP_NUM_THREADS python3 /home/u/work/train.py --parts /p1");
  facts.env["OMP_NUM_THREADS"] = "3";  // the user's setting wins
  plan = plan_launch(options, facts);
  EXPECT_EQ(plan.env.count("OMP_NUM_THREADS"), 0u);
}

TEST(LaunchPlan, WithoutAPartitionOneRankAndTheLineSaysWhatTheRuleWouldRun) {
  LaunchFacts facts = base_facts();
  facts.host_cores = 8;
  LaunchOptions options;
  options.command = {"python3", "train.py"};
  LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(plan.ranks, 1);
  EXPECT_EQ(plan.env.at("OMP_NUM_THREADS"), "7");
  EXPECT_EQ(plan.layout_line,
            "launch: layout: 1 rank per host x 7 torch threads + 1 sampler thread (8 cores, 1 "
            "socket; ranks from default); no partition given");
  facts.host_sockets = 2;  // the rule would run one rank per socket
  plan = plan_launch(options, facts);
  EXPECT_EQ(plan.ranks, 1);
  EXPECT_EQ(plan.layout_line,
            "launch: layout: 1 rank per host x 7 torch threads + 1 sampler thread (8 cores, 2 "
            "sockets; ranks from default); no partition given: the rule's layout runs 2 ranks "
            "per host (--procs-per-host 2, with a 2-part or a 1-part directory)");
}

// issue 37: `launch -- generate` and `-- partition` bound each rank to 2 cores (PE=2) but
// passed --threads 1, the sampler rule's count: their --threads are worker threads.
TEST(LaunchPlan, GenerateAndPartitionGetEveryCoreOfTheirRankAsThreads) {
  LaunchFacts facts = base_facts();
  facts.host_cores = 2;
  LaunchOptions options;
  options.command = {"generate", "--nodes", "5000", "--out", "/d"};
  LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(shell_join(plan.argv),
            "mpirun -np 1 --host localhost:1 --map-by ppr:1:node:PE=2 --bind-to core " +
                std::string(kBin) + " generate --nodes 5000 --out /d --threads 2");
  EXPECT_EQ(plan.layout_line,
            "launch: layout: 1 rank per host x 2 threads (2 cores, 1 socket; ranks from "
            "default); no partition given");
  options.command = {"partition", "--dataset", "/d", "--num-parts", "2", "--out", "/p"};
  options.procs_per_host = 2;
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=1 --bind-to core " +
                std::string(kBin) + " partition --dataset /d --num-parts 2 --out /p --threads 1");
  options.command.push_back("--threads=3");  // the command's own wins
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=1 --bind-to core " +
                std::string(kBin) + " partition --dataset /d --num-parts 2 --out /p --threads=3");
}

TEST(LaunchPlan, InferGetsEveryCoreOfItsRankAsTorchThreads) {
  LaunchFacts facts = base_facts();
  facts.parts = 2;
  facts.host_cores = 16;
  LaunchOptions options;
  options.command = {"infer", "--parts", "/p2", "--checkpoint-dir", "/ck", "--out", "/o"};
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 2 --host localhost:2 --map-by ppr:2:node:PE=8 --bind-to core " +
                std::string(kBin) +
                " infer --parts /p2 --checkpoint-dir /ck --out /o --torch-threads 8");
}

TEST(LaunchPlan, TheRulesRanksStayWithinAHostfilesSlots) {
  LaunchFacts facts = base_facts();
  facts.parts = 1;
  facts.host_cores = 16;
  facts.host_sockets = 4;  // the rule: 4 ranks per host
  facts.hostfile_text = "n1 slots=2\nn2 slots=8\n";
  LaunchOptions options = train_on("/p1");
  options.hostfile = "h";
  const LaunchPlan plan = plan_launch(options, facts);
  EXPECT_EQ(plan.ranks, 4);
  EXPECT_EQ(plan.layout.ranks_per_host, 2);
  EXPECT_EQ(plan.layout.torch_threads, 7);
  EXPECT_EQ(plan.layout.ranks_from, "rule, capped by the hostfile's slots");
}

TEST(LaunchPlan, UnderTasksetLocalRanksInheritLaunchsCpus) {
  LaunchFacts facts = base_facts();
  facts.parts = 1;
  facts.host_cores = 2;  // taskset -c 4,5 on a larger host
  facts.affinity_restricted = true;
  LaunchOptions options = train_on("/p1");
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 1 --host localhost:1 --map-by ppr:1:node --bind-to none " +
                std::string(kBin) + " train --parts /p1 --epochs 3 --torch-threads 2 --threads 1");
  options.bind = Bind::kCore;  // asked for: as asked
  EXPECT_EQ(line_of(options, facts),
            "mpirun -np 1 --host localhost:1 --map-by ppr:1:node:PE=2 --bind-to core " +
                std::string(kBin) + " train --parts /p1 --epochs 3 --torch-threads 2 --threads 1");
}

TEST(LaunchPlan, RejectsBadThreadCounts) {
  LaunchOptions options = train_on("/p1");
  options.torch_threads = 0;
  expect_plan_error_usage(options, base_facts(), "--torch-threads: must be >= 1, got 0");
  options.torch_threads.reset();
  options.sampler_threads = -1;
  expect_plan_error_usage(options, base_facts(), "--threads: must be >= 1, got -1");
}

}  // namespace
}  // namespace partita::cli
