// Stages 1 and 2 of the partition pipeline (partition/pipeline.h) on several ranks, under
// mpirun, on a Partita numpy dataset (homogeneous): each rank maps edges.npy and takes the
// row range [E r/R, E (r+1)/R), builds its block's in-edge CSC, assigns parts (metis: the
// coarse partitioner or, with --dist-partitioner ptscotch, PT-Scotch; or random) and counts
// the edge cut. Prints one JSON object (rank 0): phase times, cut, node
// imbalance, peak RSS of every rank. The rows are read by this driver, not by
// data::read_dataset_shard, so it runs without the shard reader.
//
//   mpirun -np 4 --oversubscribe dist_partition_bench --dataset /tmp/prod --parts 4
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "partita/comm/mpi_scope.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/npy.h"
#include "partita/core/timer.h"
#include "partita/partition/pipeline.h"
#include "partita/runtime/mpi_dist_comm.h"

namespace partita {
namespace {

struct Args {
  std::string dataset;
  int parts = 4;
  std::string method = "metis";
  bool undirected = false;
  int threads = 1;
  uint64_t seed = 0;
  std::string strategy = "default";
  std::string dist_partitioner = "coarse";  // or ptscotch
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(k + " needs a value");
      return argv[++i];
    };
    if (k == "--dataset")
      a.dataset = value();
    else if (k == "--parts")
      a.parts = std::stoi(value());
    else if (k == "--method")
      a.method = value();
    else if (k == "--undirected")
      a.undirected = true;
    else if (k == "--threads")
      a.threads = std::stoi(value());
    else if (k == "--seed")
      a.seed = std::stoull(value());
    else if (k == "--scotch-strategy")
      a.strategy = value();
    else if (k == "--dist-partitioner")
      a.dist_partitioner = value();
    else
      throw Error("unknown argument " + k);
  }
  if (a.dataset.empty()) throw Error("--dataset is required");
  return a;
}

// This rank's share of a homogeneous numpy dataset: a row range of edges.npy, its block's
// training ids.
data::DatasetShard read_share(const std::string& dir, int rank, int ranks) {
  data::DatasetShard shard;
  shard.path = dir;
  shard.layout = "numpy";
  shard.rank = rank;
  shard.ranks = ranks;
  const NpyArray labels = NpyArray::open(dir + "/label.npy");
  shard.num_nodes = labels.dim(0);
  std::tie(shard.node_begin, shard.node_end) = data::node_block(shard.num_nodes, rank, ranks);
  const NpyArray edges = NpyArray::open(dir + "/edges.npy");
  edges.expect(DType::kInt64, 2);
  const int64_t e = edges.dim(0);
  const int64_t begin = e * rank / ranks, end = e * (rank + 1) / ranks;
  const int64_t* pairs = edges.view<int64_t>().data();
  shard.src.resize(static_cast<size_t>(end - begin));
  shard.dst.resize(static_cast<size_t>(end - begin));
  for (int64_t i = begin; i < end; ++i) {
    shard.src[i - begin] = pairs[2 * i];
    shard.dst[i - begin] = pairs[2 * i + 1];
  }
  edges.release_elements(0, edges.num_elements());
  shard.input_edges_total = e;
  const NpyArray train = NpyArray::open(dir + "/train_idx.npy");
  for (int64_t t : train.view<int64_t>())
    if (t >= shard.node_begin && t < shard.node_end) shard.train_idx.push_back(t);
  return shard;
}

int run(MpiScope& mpi, const Args& args) {
  runtime::MpiDistCommOptions comm_options;
  comm_options.scotch_strategy = args.strategy;
  runtime::MpiDistComm comm(mpi.world(), comm_options);
  const int rank = comm.rank(), ranks = comm.size();
  Stopwatch total;
  nlohmann::json phases = nlohmann::json::object();
  Stopwatch watch;
  data::DatasetShard shard = read_share(args.dataset, rank, ranks);
  comm.agree("");
  phases["read_share"] = watch.seconds();
  auto progress = [&](const char* what) {
    if (rank == 0)
      std::fprintf(stderr, "[%.1f s] %s (rank 0 peak RSS %.2f GiB)\n", total.seconds(), what,
                   static_cast<double>(peak_rss_bytes()) / (1 << 30));
  };
  progress("share read");
  watch.restart();
  partition::ShardGraph graph =
      partition::build_shard_graph(shard, args.undirected, true, comm, args.threads);
  comm.agree("");
  phases["build_shard_graph"] = watch.seconds();
  progress("shard graph built");
  watch.restart();
  partition::PartitionOptions options;
  options.num_parts = args.parts;
  options.method = args.method == "random" ? partition::Method::kRandom : partition::Method::kMetis;
  options.seed = args.seed;
  options.threads = args.threads;
  if (args.dist_partitioner != "coarse" && args.dist_partitioner != "ptscotch")
    throw Error("--dist-partitioner: coarse or ptscotch, not '" + args.dist_partitioner + "'");
  options.dist_partitioner = args.dist_partitioner == "ptscotch"
                                 ? partition::DistPartitioner::kPtScotch
                                 : partition::DistPartitioner::kCoarse;
  if (args.method != "random") {
    // The adjacency alone first, to tell its memory from the partitioner's (built again
    // inside assign_parts).
    Stopwatch adj_watch;
    {
      const partition::DistAdjacency adj =
          partition::distributed_adjacency(graph, comm, args.threads);
    }
    phases["adjacency_alone"] = adj_watch.seconds();
    progress("adjacency built (and freed)");
    watch.restart();
  }
  const std::vector<int32_t> part =
      partition::assign_parts({graph, shard.train_idx, options, comm}).part;
  comm.agree("");
  phases["assign_parts"] = watch.seconds();
  progress("parts assigned");
  const double stages_s = total.seconds();
  watch.restart();
  const int64_t cut = partition::distributed_edge_cut(graph, part, comm);
  phases["edge_cut"] = watch.seconds();
  std::vector<int64_t> nodes(static_cast<size_t>(args.parts), 0), edges(nodes.size(), 0),
      train(nodes.size(), 0);
  for (size_t v = 0; v < part.size(); ++v) {
    ++nodes[part[v]];
    edges[part[v]] += graph.in_edges.degree(static_cast<int64_t>(v));
  }
  for (int64_t t : shard.train_idx) ++train[part[t - graph.node_begin]];
  comm.allreduce_sum(nodes.data(), nodes.size());
  comm.allreduce_sum(edges.data(), edges.size());
  comm.allreduce_sum(train.data(), train.size());
  auto imbalance = [&](const std::vector<int64_t>& c) {
    int64_t sum = 0;
    for (int64_t x : c) sum += x;
    return sum == 0 ? 1.0
                    : static_cast<double>(*std::max_element(c.begin(), c.end())) * args.parts /
                          static_cast<double>(sum);
  };
  const int64_t peak = peak_rss_bytes();
  std::vector<uint8_t> mine(sizeof peak);
  std::memcpy(mine.data(), &peak, sizeof peak);
  const auto peaks = comm.allgather(mine);
  if (rank == 0) {
    nlohmann::json out;
    out["benchmark"] = "dist_partition";
    out["dataset"] = args.dataset;
    out["ranks"] = ranks;
    out["parts"] = args.parts;
    out["method"] = args.method;
    out["undirected"] = args.undirected;
    out["threads_per_rank"] = args.threads;
    out["scotch_strategy"] = args.strategy;
    out["dist_partitioner"] = args.dist_partitioner;
    out["num_nodes"] = graph.num_nodes;
    out["num_edges"] = graph.num_edges_total;
    out["edge_cut"] = cut;
    out["edge_cut_fraction"] =
        static_cast<double>(cut) / static_cast<double>(graph.num_edges_total);
    out["node_imbalance"] = imbalance(nodes);
    out["edge_imbalance"] = imbalance(edges);
    out["train_imbalance"] = imbalance(train);
    out["phase_seconds"] = phases;
    out["stages_1_2_seconds"] = stages_s;
    std::vector<int64_t> rss;
    for (const auto& p : peaks) {
      int64_t v = 0;
      std::memcpy(&v, p.data(), sizeof v);
      rss.push_back(v);
    }
    out["rank_peak_rss_bytes"] = rss;
    std::printf("%s\n", out.dump(2).c_str());
  }
  return 0;
}

}  // namespace
}  // namespace partita

int main(int argc, char** argv) {
  try {
    partita::MpiScope mpi(&argc, &argv);
    try {
      if (mpi.rank() != 0) partita::set_log_level(partita::LogLevel::kQuiet);
      return partita::run(mpi, partita::parse(argc, argv));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: rank %d: %s\n", mpi.rank(), e.what());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
