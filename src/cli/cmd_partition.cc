// partita partition: dataset in, partition directory out.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "commands.h"
#include "launcher_env.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/npy.h"
#include "partita/core/timer.h"
#include "partita/partition/output_dir.h"
#include "partita/partition/partition.h"
#include "partita/runtime/failure.h"
#include "partita/runtime/job_collectives.h"
#include "partita/runtime/job_dist_comm.h"
#include "rank_main.h"

namespace partita::cli {
namespace {

// Deadline of every wait between ranks: a stage computes between exchanges for as long as
// its share takes (PT-Scotch on a large graph: minutes).
constexpr double kRankWaitSeconds = 3600;

void print_result(const std::string& dataset, const std::string& out,
                  const partition::PartitionSummary& summary) {
  // -q: the result line alone; else the summary table under it.
  std::printf("partitioned %s into %s: %zu part%s, edge cut %.2f%%\n%s", dataset.c_str(),
              out.c_str(), summary.parts.size(), summary.parts.size() == 1 ? "" : "s",
              100.0 * summary.edge_cut_fraction,
              log_level() >= LogLevel::kInfo ? partition::format_summary(summary).c_str() : "");
}

// One process: --out checked and prepared (partition/output_dir.h), then the pipeline; what
// a failed run wrote is removed.
partition::PartitionSummary run_single(const std::string& dataset, const data::LoadOptions& load,
                                       const partition::PartitionOptions& options, bool force) {
  const std::string& out = options.out_dir;
  const partition::OutputDirState state = partition::inspect_output_dir(out, dataset);
  partition::check_output_dir(state, out, dataset, force);
  partition::OutputDir dir(out, state);
  try {
    return partition::run_partition(dataset, load, options);
  } catch (...) {
    dir.discard();
    throw;
  }
}

// Under mpirun with several ranks: the pipeline on every rank (partition/pipeline.h).
// A failure on any rank is agreed by every rank and printed once (runtime::SetupError). Rank
// 0 alone inspects and prepares --out and tells the others what it found, so every rank
// gives the same verdict; after a failure (agreed, so every rank has stopped writing) it
// removes what the run wrote.
int run_distributed(const std::string& dataset, const data::LoadOptions& load,
                    partition::PartitionOptions options, bool force) {
  return run_rank([&](runtime::RankContext& rank) {
    if (options.threads <= 0) options.threads = rank.cores_per_rank();
    // Progress from rank 0 only; the other ranks still print warnings and errors.
    if (rank.rank() != 0 && log_level() >= LogLevel::kInfo) set_log_level(LogLevel::kQuiet);
    std::unique_ptr<Collectives> job = runtime::mpi_job_collectives(kRankWaitSeconds);
    const std::string& out = options.out_dir;
    auto state = static_cast<int64_t>(rank.rank() == 0 ? partition::inspect_output_dir(out, dataset)
                                                       : partition::OutputDirState{});
    job->broadcast(&state, 1, 0);
    partition::check_output_dir(static_cast<partition::OutputDirState>(state), out, dataset, force);
    std::unique_ptr<partition::OutputDir> dir;
    runtime::agree_on_setup(*job, [&] {
      if (rank.rank() == 0)
        dir = std::make_unique<partition::OutputDir>(out,
                                                     static_cast<partition::OutputDirState>(state));
    });
    partition::PartitionSummary summary;
    try {
      runtime::agree_on_setup(*job, [&] {
        std::unique_ptr<partition::DistComm> comm = runtime::mpi_job_dist_comm(kRankWaitSeconds);
        summary = partition::run_partition(dataset, load, options, *comm);
      });
    } catch (...) {
      if (dir) dir->discard();
      throw;
    }
    if (rank.rank() == 0) print_result(dataset, out, summary);
    return 0;
  });
}

}  // namespace

Action add_partition_command(CLI::App& app) {
  struct Flags {
    std::string dataset;
    data::LoadOptions load;
    partition::PartitionOptions partition;
    std::string method = "metis";
    std::string dist_partitioner = "coarse";
    std::string feature_dtype = "float32";
    bool no_reverse = false;
    std::string edge_split;
    std::string edge_split_by = "random";
    bool force = false;
  };
  auto flags = std::make_shared<Flags>();
  app.description(
      "Partition a dataset for distributed training. The dataset is a directory in OGB's raw "
      "node-property layout (raw/*.csv.gz, split/<name>/*.csv.gz), its heterogeneous layout, "
      "or the Partita numpy layout (edges.npy, feat.npy, ...), detected automatically. A "
      "heterogeneous dataset gives a typed partition (one id range per node type in each "
      "part, a relation per edge). Nodes are renumbered so part "
      "p owns a contiguous id range; see docs/partition-format.md for the output. Under "
      "mpirun (or partita launch) with several ranks, each rank reads only its share of the "
      "dataset (numpy, typed numpy or chunked layout) and the graph is partitioned across "
      "them (metis: see --dist-partitioner); --num-parts may differ from the rank count.");
  app.add_option("--dataset", flags->dataset, "Input dataset directory")->required();
  app.add_option("--out", flags->partition.out_dir,
                 "Output partition directory: new, empty, or a partition to replace (its "
                 "parts are removed first); never the dataset's directory, inside it or "
                 "around it. A run that fails removes what it wrote")
      ->required();
  app.add_flag("--force", flags->force,
               "Write into --out even if it is a non-empty directory that is not a partition "
               "(its files are left alone)");
  app.add_option("--num-parts", flags->partition.num_parts, "Number of parts (one per rank)")
      ->capture_default_str();
  app.add_option("--method", flags->method, "Assignment method: metis (min edge cut) or random")
      ->capture_default_str();
  app.add_option("--dist-partitioner", flags->dist_partitioner,
                 "Under mpirun, method metis: coarse (local clustering, METIS on the coarse "
                 "graph, parallel refinement; docs/distributed-partitioner.md) or ptscotch")
      ->capture_default_str();
  app.add_flag("--balance-train", flags->partition.balance_train,
               "METIS: also balance the number of training nodes per part");
  app.add_flag("--balance-edges", flags->partition.balance_edges,
               "METIS: also balance the number of edges per part");
  app.add_flag("--undirected", flags->load.undirected, "Add the reverse of every edge");
  app.add_flag("--no-reverse", flags->no_reverse,
               "Heterogeneous datasets: do not add the reverse relation rev_<name> of every "
               "relation (recorded in partita.json)");
  app.add_option("--num-classes", flags->load.num_classes,
                 "The number of classes, for layouts that do not state it (0: the largest "
                 "label + 1, refused when most of those classes would have no node, as a "
                 "stray label makes them); every label must be below it")
      ->capture_default_str();
  app.add_option("--split", flags->load.split,
                 "OGB layout: split folder under split/ (default: the only one)");
  app.add_option("--edge-split", flags->edge_split,
                 "Link prediction: VALID,TEST fractions of the edges (an edge and its reverse "
                 "together, a pair repeated at different times once) to hold out of the graph, "
                 "each with as many sampled non-edges, e.g. 0.05,0.10 "
                 "(docs/partition-format.md); homogeneous datasets only");
  app.add_option("--edge-split-by", flags->edge_split_by,
                 "How --edge-split picks the held-out edges: random, or time (the latest by "
                 "edge_time held out, test the latest; the pairs' times are written too, for "
                 "`train --task link --temporal`)")
      ->capture_default_str();
  app.add_option("--seed", flags->partition.seed,
                 "Seed of METIS / random assignment and of the --edge-split sample")
      ->capture_default_str();
  app.add_option("--threads", flags->partition.threads, "Threads (0: all cores)")
      ->capture_default_str();
  app.add_option("--feature-dtype", flags->feature_dtype,
                 "Stored feature type: float32, float16 or bfloat16 (rounded to nearest; half "
                 "the bytes on disk, in the cache and on the wire; widened at the model input)")
      ->capture_default_str();
  return [flags] {
    flags->partition.feature_dtype =
        value_named(feature_dtype_names(), "--feature-dtype", flags->feature_dtype);
    flags->partition.method = value_named(partition::method_names(), "--method", flags->method);
    if (flags->dist_partitioner == "coarse") {
      flags->partition.dist_partitioner = partition::DistPartitioner::kCoarse;
    } else if (flags->dist_partitioner == "ptscotch") {
      flags->partition.dist_partitioner = partition::DistPartitioner::kPtScotch;
    } else {
      throw UsageError("--dist-partitioner: unknown partitioner '" + flags->dist_partitioner +
                       "' (coarse or ptscotch)");
    }
    PARTITA_CHECK(flags->load.num_classes >= 0, UsageError,
                  "--num-classes: must be >= 1 (or 0: from the labels), got {}",
                  flags->load.num_classes);
    if (!flags->edge_split.empty())
      flags->partition.edge_split = partition::parse_edge_split(flags->edge_split);
    flags->partition.edge_split.by =
        value_named(partition::split_by_names(), "--edge-split-by", flags->edge_split_by);
    PARTITA_CHECK(flags->partition.edge_split.by == partition::SplitBy::kRandom ||
                      flags->partition.edge_split.enabled(),
                  UsageError, "--edge-split-by: time needs --edge-split VALID,TEST");
    flags->load.threads = flags->partition.threads;
    flags->load.reverse_relations = !flags->no_reverse;
    if (launcher_size() > 1)
      return run_distributed(flags->dataset, flags->load, flags->partition, flags->force);
    print_result(flags->dataset, flags->partition.out_dir,
                 run_single(flags->dataset, flags->load, flags->partition, flags->force));
    return 0;
  };
}

}  // namespace partita::cli
