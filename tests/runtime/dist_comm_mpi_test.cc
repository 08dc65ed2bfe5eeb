// runtime::MpiDistComm under mpirun: a plain program that exits non-zero on any mismatch
// (run at -np 2 and -np 3 by CTest). Checks alltoall (empty buffers, many slices), the
// reductions, allgather, agree, and PT-Scotch's part_graph through stage 2 of the
// distributed partition pipeline: the same parts on two runs, node balance <= 1.05, every
// part non-empty, and an edge cut within kCutBound of single-process METIS on the same graph.
//
// --late-rank: rank 1 joins an allreduce after the others' 1 s deadline; they must throw
// TimeoutError (then rank 1 completes it late and everyone finalizes).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "partita/comm/errors.h"
#include "partita/comm/mpi_scope.h"
#include "partita/core/log.h"
#include "partita/core/npy.h"
#include "partita/data/dataset.h"
#include "partita/data/generate.h"
#include "partita/partition/assign.h"
#include "partita/partition/pipeline.h"
#include "partita/runtime/mpi_dist_comm.h"

namespace partita {
namespace {

constexpr double kCutBound = 1.25;  // PT-Scotch's cut / single-process METIS's, at most

int failures = 0;

#define EXPECT(cond, ...)                                           \
  do {                                                              \
    if (!(cond)) {                                                  \
      ++failures;                                                   \
      std::fprintf(stderr, "rank %d: FAILED %s: %s\n", rank, #cond, \
                   fmt::format(__VA_ARGS__).c_str());               \
    }                                                               \
  } while (0)

uint8_t byte_of(int from, int to, size_t i) {
  return static_cast<uint8_t>((from * 131 + to * 31 + i * 7 + i / 251) & 0xff);
}

void check_alltoall(runtime::MpiDistComm& comm, size_t base) {
  const int rank = comm.rank(), ranks = comm.size();
  // Sizes: empty to the next rank, `base` bytes times (rank + to + 1) to the others.
  auto size_of = [&](int from, int to) -> size_t {
    return to == (from + 1) % ranks && ranks > 1 ? 0 : base * (from + to + 1) + from;
  };
  std::vector<std::vector<uint8_t>> send(static_cast<size_t>(ranks));
  for (int to = 0; to < ranks; ++to) {
    send[to].resize(size_of(rank, to));
    for (size_t i = 0; i < send[to].size(); ++i) send[to][i] = byte_of(rank, to, i);
  }
  const auto recv = comm.alltoall(std::move(send));
  EXPECT(static_cast<int>(recv.size()) == ranks, "{} buffers", recv.size());
  for (int from = 0; from < ranks; ++from) {
    EXPECT(recv[from].size() == size_of(from, rank), "{} bytes from rank {}", recv[from].size(),
           from);
    size_t bad = 0;
    for (size_t i = 0; i < recv[from].size(); ++i) bad += recv[from][i] != byte_of(from, rank, i);
    EXPECT(bad == 0, "{} wrong bytes from rank {} (base {})", bad, from, base);
  }
}

void check_collectives(MpiScope& scope) {
  const int rank = scope.rank(), ranks = scope.size();
  runtime::MpiDistCommOptions small;
  small.slice_bytes = 1000;  // many slices per message
  small.timeout_s = 60;
  runtime::MpiDistComm comm(scope.world(), small);
  check_alltoall(comm, 0);       // all empty but the rank's own
  check_alltoall(comm, 7);       // below one slice
  check_alltoall(comm, 2345);    // several slices, ragged ends
  check_alltoall(comm, 100000);  // a hundred slices and more
  int64_t v[2] = {rank + 1, 10 * rank};
  comm.allreduce_sum(v, 2);
  EXPECT(v[0] == int64_t{ranks} * (ranks + 1) / 2, "sum {}", v[0]);
  int64_t m = 5 * rank;
  comm.allreduce_max(&m, 1);
  EXPECT(m == 5 * (ranks - 1), "max {}", m);
  const auto all = comm.allgather(std::vector<uint8_t>(static_cast<size_t>(rank), 9));
  for (int r = 0; r < ranks; ++r)
    EXPECT(all[r] == std::vector<uint8_t>(static_cast<size_t>(r), 9), "allgather from {}", r);
  // agree: nobody failed, then ranks >= 1 fail: every rank throws rank 1's text.
  comm.agree("");
  std::string caught;
  try {
    comm.agree(rank >= 1 ? "bad input on rank " + std::to_string(rank) : "");
  } catch (const Error& e) {
    caught = e.what();
  }
  const std::string expected = ranks == 1  ? ""
                               : rank == 1 ? "bad input on rank 1"
                                           : "rank 1: bad input on rank 1";
  EXPECT(caught == expected, "agree threw '{}'", caught);
}

// The graph: a generated dataset, written by each rank into its own folder (the output
// depends only on the options), read whole for the reference and in shares for the test.
void check_part_graph(MpiScope& scope) {
  const int rank = scope.rank(), ranks = scope.size();
  const std::string dir = "/tmp/partita-dist-comm-mpi-test-" + std::to_string(getpid());
  data::GenerateOptions gen;
  gen.nodes = 30000;
  gen.avg_degree = 10;
  gen.feat_dim = 1;
  gen.classes = 8;
  gen.seed = 3;
  gen.threads = 1;
  gen.out_dir = dir;
  data::generate_synthetic(gen);
  const data::Dataset ds = data::load_dataset(dir, data::LoadOptions{});
  const std::vector<int64_t> pairs = read_npy_vector<int64_t>(dir + "/edges.npy", 2);
  std::filesystem::remove_all(dir);

  runtime::MpiDistComm comm(scope.world());
  for (int parts : {ranks + 1, 4, 2}) {
    std::vector<int32_t> first;
    for (int run = 0; run < 2; ++run) {
      data::DatasetShard shard;
      shard.rank = rank;
      shard.ranks = ranks;
      shard.num_nodes = ds.num_nodes;
      std::tie(shard.node_begin, shard.node_end) = data::node_block(ds.num_nodes, rank, ranks);
      for (size_t i = 0; i < pairs.size() / 2; ++i)
        if (static_cast<int>(i % ranks) == rank) {
          shard.src.push_back(pairs[2 * i]);
          shard.dst.push_back(pairs[2 * i + 1]);
        }
      partition::ShardGraph g = partition::build_shard_graph(shard, false, true, comm, 2);
      partition::PartitionOptions options;
      options.num_parts = parts;
      options.seed = 7;
      options.threads = 2;
      std::vector<int32_t> part = partition::assign_parts({g, shard.train_idx, options, comm}).part;
      if (run == 1) {
        EXPECT(part == first, "{} parts: the second run differs", parts);
        continue;
      }
      first = part;
      std::vector<int64_t> count(static_cast<size_t>(parts), 0);
      for (int32_t p : part) ++count[p];
      comm.allreduce_sum(count.data(), count.size());
      const int64_t largest = *std::max_element(count.begin(), count.end());
      const int64_t smallest = *std::min_element(count.begin(), count.end());
      const double imbalance = static_cast<double>(largest) * parts / ds.num_nodes;
      EXPECT(smallest > 0 && imbalance <= 1.05, "{} parts: node imbalance {} (smallest {})", parts,
             imbalance, smallest);
      const int64_t cut = partition::distributed_edge_cut(g, part, comm);
      // Single-process METIS on the same graph, its cut counted the same way.
      const partition::MetisGraph mg = partition::metis_graph(ds.in_edges, 2);
      partition::MetisAssignOptions mo;
      mo.num_parts = parts;
      mo.seed = 7;
      const std::vector<int32_t> ref = partition::assign_metis(
          mg.adj, ArrayView<const int64_t>(ds.in_edges.indptr), {}, mo, nullptr);
      int64_t ref_cut = 0;
      for (int64_t v = 0; v < ds.num_nodes; ++v)
        for (int64_t k = ds.in_edges.indptr[v]; k < ds.in_edges.indptr[v + 1]; ++k)
          ref_cut += ref[ds.in_edges.indices[k]] != ref[v];
      const double ratio = static_cast<double>(cut) / static_cast<double>(ref_cut);
      if (rank == 0)
        std::printf(
            "part_graph: %d ranks, %d parts: cut %lld (METIS %lld, ratio %.3f), node "
            "imbalance %.4f\n",
            ranks, parts, static_cast<long long>(cut), static_cast<long long>(ref_cut), ratio,
            imbalance);
      EXPECT(ratio <= kCutBound, "{} parts: cut {} vs METIS {}", parts, cut, ref_cut);
    }
  }
}

// balance_train and balance_edges through PT-Scotch plus the rebalancing pass: with the
// training nodes all among the first fifth of ids, every constraint must end <= 1.05.
void check_balance_flags(MpiScope& scope) {
  const int rank = scope.rank(), ranks = scope.size();
  const std::string dir = "/tmp/partita-dist-comm-mpi-test-b" + std::to_string(getpid());
  data::GenerateOptions gen;
  gen.nodes = 20000;
  gen.avg_degree = 8;
  gen.feat_dim = 1;
  gen.seed = 4;
  gen.threads = 1;
  gen.out_dir = dir;
  data::generate_synthetic(gen);
  const std::vector<int64_t> pairs = read_npy_vector<int64_t>(dir + "/edges.npy", 2);
  std::filesystem::remove_all(dir);
  runtime::MpiDistComm comm(scope.world());
  data::DatasetShard shard;
  shard.rank = rank;
  shard.ranks = ranks;
  shard.num_nodes = gen.nodes;
  std::tie(shard.node_begin, shard.node_end) = data::node_block(gen.nodes, rank, ranks);
  for (size_t i = 0; i < pairs.size() / 2; ++i)
    if (static_cast<int>(i % ranks) == rank) {
      shard.src.push_back(pairs[2 * i]);
      shard.dst.push_back(pairs[2 * i + 1]);
    }
  for (int64_t v = shard.node_begin; v < std::min<int64_t>(shard.node_end, gen.nodes / 5); ++v)
    shard.train_idx.push_back(v);
  const std::vector<int64_t> train = shard.train_idx;
  partition::ShardGraph g = partition::build_shard_graph(shard, false, true, comm, 2);
  partition::PartitionOptions options;
  options.num_parts = 4;
  options.seed = 1;
  options.balance_train = true;
  options.balance_edges = true;
  const std::vector<int32_t> part =
      partition::assign_parts({g, shard.train_idx, options, comm}).part;
  std::vector<int64_t> load(12, 0);
  for (size_t v = 0; v < part.size(); ++v) {
    load[part[v]] += 1;
    load[8 + part[v]] += g.in_edges.degree(static_cast<int64_t>(v));
  }
  for (int64_t t : train) load[4 + part[t - g.node_begin]] += 1;
  comm.allreduce_sum(load.data(), load.size());
  for (int c = 0; c < 3; ++c) {
    const int64_t* l = load.data() + 4 * c;
    const double sum = static_cast<double>(l[0] + l[1] + l[2] + l[3]);
    const double imbalance = static_cast<double>(*std::max_element(l, l + 4)) * 4 / sum;
    if (rank == 0) std::printf("balance flags: constraint %d max/mean %.4f\n", c, imbalance);
    EXPECT(imbalance <= 1.05, "constraint {}: max/mean {}", c, imbalance);
  }
}

int run_late_rank(MpiScope& scope) {
  const int rank = scope.rank();
  runtime::MpiDistCommOptions options;
  options.timeout_s = 1;
  runtime::MpiDistComm comm(scope.world(), options);
  int64_t v = 1;
  if (rank == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(4));
    comm.allreduce_sum(&v, 1);  // completes late: the others' requests are still posted
  } else {
    std::string caught;
    try {
      comm.allreduce_sum(&v, 1);
    } catch (const TimeoutError& e) {
      caught = e.what();
    }
    EXPECT(caught.find("within 1 s") != std::string::npos, "caught '{}'", caught);
  }
  MPI_Barrier(scope.world());
  std::printf("dist_comm_mpi_test --late-rank rank %d: %s\n", rank, failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

}  // namespace
}  // namespace partita

int main(int argc, char** argv) {
  partita::set_log_level(partita::LogLevel::kQuiet);
  try {
    partita::MpiScope scope(&argc, &argv);
    try {
      if (argc > 1 && std::string(argv[1]) == "--late-rank") return partita::run_late_rank(scope);
      partita::check_collectives(scope);
      partita::check_part_graph(scope);
      partita::check_balance_flags(scope);
      int64_t bad = partita::failures;
      MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT64_T, MPI_SUM, scope.world());
      if (scope.rank() == 0) std::printf("dist_comm_mpi_test: %s\n", bad ? "FAILED" : "ok");
      return bad ? 1 : 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: rank %d: %s\n", scope.rank(), e.what());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
