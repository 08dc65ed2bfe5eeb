// Stage 2 of the pipeline (pipeline.h): a part for every node of the block, one interface
// over the strategies. Whole-graph METIS (assign_metis) on one rank; across ranks nobody
// holds a global array:
//
// Random: node v's label is v mod P (so part p gets floor(n/P) nodes, plus one for the first
// n mod P parts: the one-rank counts), shuffled inside each block by Fisher-Yates with a
// stream keyed by (seed, rank, ranks).
//
// METIS-like: the symmetrized adjacency (in- plus out-neighbours; the out-neighbours come
// from the sources' owners unless the graph is already symmetric) goes to the coarse
// partitioner or DistComm::part_graph (PT-Scotch under MPI); then rebalancing, and parts
// left empty get one node each from the largest part, as assign_metis does.
#include "partita/partition/assign.h"

#include <algorithm>

#include "coarse_partition.h"
#include "collective.h"
#include "layout.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/core/parameter_error.h"
#include "partita/core/random.h"
#include "partita/core/timer.h"
#include "partita/partition/pipeline.h"
#include "rebalance.h"
#include "shard_graph.h"

namespace partita::partition {
namespace {

constexpr uint64_t kRandomAssignTag = 0x7061727469746100ULL;  // "partita\0": this use's stream
constexpr double kPartGraphImbalance = 1.03;  // asked of part_graph; the goal is <= 1.05
constexpr double kRebalanceLimit = 1.05;      // every constraint
constexpr double kRefineLimit = 1.04;         // the coarse partitioner's refinement

// Fisher-Yates: a uniformly random permutation of `part`, fixed by `rng`.
std::vector<int32_t> shuffled(std::vector<int32_t> part, Rng rng) {
  for (int64_t i = static_cast<int64_t>(part.size()) - 1; i > 0; --i)
    std::swap(part[i], part[static_cast<int64_t>(rng.below(static_cast<uint64_t>(i) + 1))]);
  return part;
}

}  // namespace

DistAdjacency distributed_adjacency(const ShardGraph& graph, DistComm& comm, int threads) {
  threads = resolve_threads(threads);
  const int ranks = comm.size();
  const int64_t rows = graph.node_end - graph.node_begin;
  DistAdjacency adj;
  for (int r = 0; r <= ranks; ++r)  // the last: num_nodes
    adj.vtxdist.push_back(data::node_block(graph.num_nodes, r, ranks).first);
  const graph::Csr& in = graph.in_edges;
  graph::Csr out;
  if (!graph.symmetric) {
    // Every in-edge (u -> v) goes to u's owner as the entry (v, u): each rank learns the
    // out-neighbours of its own nodes, as a CSR over the block (rows_of_entries).
    const BlockOwner owner(graph.num_nodes, ranks);
    std::vector<int64_t> count(static_cast<size_t>(ranks), 0);
    for (int64_t u : in.indices) ++count[owner(u)];
    std::vector<std::vector<uint8_t>> send(static_cast<size_t>(ranks));
    for (int r = 0; r < ranks; ++r) send[r].reserve(static_cast<size_t>(count[r]) * 16);
    for (int64_t v = 0; v < rows; ++v)
      for (int64_t k = in.indptr[v]; k < in.indptr[v + 1]; ++k)
        BytePacker(&send[owner(in.indices[k])]).put({graph.node_begin + v, in.indices[k]});
    out = rows_of_entries(comm.alltoall(std::move(send)), graph.node_begin, rows, comm.rank(),
                          threads);
  }

  // Row v: sort(in(v) ∪ out(v)) without repeats (typed rows repeat a source across
  // relations) and without v. Pass 1 sizes the rows, pass 2 fills them.
  adj.xadj.assign(static_cast<size_t>(rows) + 1, 0);
  constexpr int64_t kRows = 1 << 12;
  auto merged_row = [&](int64_t v, std::vector<int64_t>& row) {
    row.assign(in.indices.begin() + in.indptr[v], in.indices.begin() + in.indptr[v + 1]);
    if (!graph.symmetric)
      row.insert(row.end(), out.indices.begin() + out.indptr[v],
                 out.indices.begin() + out.indptr[v + 1]);
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    row.erase(std::remove(row.begin(), row.end(), graph.node_begin + v), row.end());
  };
  parallel_chunks(0, rows, kRows, threads, [&](int64_t b, int64_t e) {
    std::vector<int64_t> row;
    for (int64_t v = b; v < e; ++v) {
      merged_row(v, row);
      adj.xadj[v + 1] = static_cast<int64_t>(row.size());
    }
  });
  for (int64_t v = 0; v < rows; ++v) adj.xadj[v + 1] += adj.xadj[v];
  adj.adjncy.resize(static_cast<size_t>(adj.xadj[rows]));
  parallel_chunks(0, rows, kRows, threads, [&](int64_t b, int64_t e) {
    std::vector<int64_t> row;
    for (int64_t v = b; v < e; ++v) {
      merged_row(v, row);
      std::copy(row.begin(), row.end(), adj.adjncy.begin() + adj.xadj[v]);
    }
  });
  return adj;
}

namespace {

// The coarse partitioner or PT-Scotch on the distributed adjacency, then rebalancing and
// empty parts filled.
std::vector<int32_t> partition_across_ranks(const AssignInput& in, AssignStrategy strategy) {
  const PartitionOptions& o = in.options;
  DistComm& comm = in.comm;
  const std::vector<std::vector<int64_t>> weight =
      constraint_weights(in.graph.in_edges.indptr, in.graph.node_begin, in.train_idx,
                         {o.num_parts, o.seed, o.balance_train, o.balance_edges}, comm);
  std::vector<int32_t> part;
  {
    DistAdjacency adj = distributed_adjacency(in.graph, comm, o.threads);
    if (strategy == AssignStrategy::kCoarse) {
      CoarseStats stats;
      part = coarse_partition(std::move(adj), weight, {o.num_parts, kRefineLimit, o.seed}, comm,
                              stats);
      if (comm.rank() == 0)
        log_info(
            "partition: coarse partitioner: {} levels, coarse graph {} vertices / {} entries, "
            "{} refinement moves in {} rounds",
            stats.levels, stats.coarse_vertices, stats.coarse_edges, stats.refine_moves,
            stats.refine_rounds);
    } else {
      part = comm.part_graph(adj, o.num_parts, kPartGraphImbalance, o.seed);
    }
  }
  PARTITA_CHECK(part.size() == static_cast<size_t>(in.graph.node_end - in.graph.node_begin), Error,
                "internal: the partitioner returned {} parts for {} nodes", part.size(),
                in.graph.node_end - in.graph.node_begin);
  for (int32_t p : part)
    PARTITA_CHECK(p >= 0 && p < o.num_parts, Error,
                  "the partitioner returned part {} outside [0, {})", p, o.num_parts);
  // Every constraint to max/mean <= kRebalanceLimit (rebalance.h). After PT-Scotch (one vertex
  // weight: the node count) it reaches balance_train / balance_edges; after the coarse
  // partitioner it is a safety net (only constraints above the limit move).
  if (strategy == AssignStrategy::kCoarse || weight.size() > 1) {
    const RebalanceStats stats =
        rebalance_parts(weight, part, {o.num_parts, kRebalanceLimit}, comm);
    std::string figures;
    for (double x : stats.imbalance) figures += fmt::format(" {:.3f}", x);
    if (comm.rank() == 0)
      log_info("partition: rebalanced {} constraints in {} rounds, {} nodes moved; max/mean:{}",
               weight.size(), stats.rounds, stats.moved, figures);
    for (double x : stats.imbalance)
      if (x > kRebalanceLimit && comm.rank() == 0)
        log_warning("partition: a constraint stays above {} (max/mean:{}) after rebalancing",
                    kRebalanceLimit, figures);
  }
  const int filled = fill_empty_parts(in.graph.node_begin, part, o.num_parts, comm);
  if (filled > 0 && comm.rank() == 0)
    log_warning(
        "partition: the partitioner left {} of {} parts empty; each got one node from "
        "the largest part",
        filled, o.num_parts);
  return part;
}

// METIS on the whole graph (one rank): its adjacency from the in-edges (typed: relations
// ignored, a source reaching a node through several relations counted once), then
// assign_metis. When the caller allows it, a symmetric graph's indices are freed while
// METIS's adjacency holds the same rows, and restored from it afterwards.
Assignment metis_whole_graph(const AssignInput& in) {
  const ShardGraph& g = in.graph;
  const int threads = resolve_threads(in.options.threads);
  PARTITA_CHECK(in.comm.size() == 1, Error, "internal: whole-graph METIS on {} ranks",
                in.comm.size());
  Assignment out;
  Stopwatch watch;
  MetisGraph metis = metis_graph(g.in_edges, threads);
  ShardGraph* reclaimed = metis.equals_input && g.edge_relation.empty() ? in.reclaimable : nullptr;
  if (reclaimed != nullptr) std::vector<int64_t>().swap(reclaimed->in_edges.indices);
  out.phases.emplace_back("symmetrize", watch.seconds());
  const PartitionOptions& o = in.options;
  MetisAssignStats stats;
  out.part = assign_metis(metis.adj, g.in_edges.indptr, in.train_idx,
                          {o.num_parts, o.seed, o.balance_train, o.balance_edges}, &stats);
  out.phases.emplace_back("metis", stats.metis_s);
  if (reclaimed != nullptr) {
    const std::vector<int32_t>& from = metis.adj.indices;
    std::vector<int64_t>& to = reclaimed->in_edges.indices;
    to.resize(from.size());
    parallel_chunks(0, static_cast<int64_t>(from.size()), int64_t{1} << 20, threads,
                    [&](int64_t b, int64_t e) { std::copy(&from[b], &from[b] + (e - b), &to[b]); });
  }
  return out;
}

}  // namespace

std::vector<int32_t> assign_random(int64_t num_nodes, int num_parts, uint64_t seed) {
  // Balanced labels: node count of part p is floor(n/P) or that + 1 (the first n mod P parts).
  std::vector<int32_t> part(static_cast<size_t>(num_nodes));
  const int64_t base = num_parts > 0 ? num_nodes / num_parts : 0;
  const int64_t extra = num_parts > 0 ? num_nodes % num_parts : 0;
  int64_t v = 0;
  for (int p = 0; p < num_parts; ++p)
    for (int64_t i = 0; i < base + (p < extra ? 1 : 0); ++i) part[v++] = p;
  return shuffled(std::move(part), Rng(stream_key(seed, kRandomAssignTag)));
}

AssignStrategy assign_strategy(const PartitionOptions& options, int ranks) {
  if (options.method == Method::kRandom) return AssignStrategy::kRandom;
  if (ranks == 1) return AssignStrategy::kMetis;
  return options.dist_partitioner == DistPartitioner::kCoarse ? AssignStrategy::kCoarse
                                                              : AssignStrategy::kPtScotch;
}

Assignment assign_parts(const AssignInput& in) {
  const PartitionOptions& o = in.options;
  const ShardGraph& g = in.graph;
  PARTITA_CHECK_PARAM(o.num_parts >= 1 && o.num_parts <= g.num_nodes, "num_parts",
                      "{} is outside [1, {}] (the number of nodes)", o.num_parts, g.num_nodes);
  const AssignStrategy strategy = in.strategy.value_or(assign_strategy(o, in.comm.size()));
  const int64_t rows = g.node_end - g.node_begin;
  if (strategy == AssignStrategy::kMetis && o.num_parts > 1) return metis_whole_graph(in);
  Stopwatch watch;
  Assignment out;
  if (strategy == AssignStrategy::kRandom) {
    if ((o.balance_train || o.balance_edges) && in.comm.rank() == 0)
      log_warning("`balance_train`/`balance_edges` apply to METIS only; ignored by random");
    if (in.comm.size() == 1) {
      out.part = assign_random(rows, o.num_parts, o.seed);
    } else {  // labels v mod P of the block's nodes, shuffled in the block
      out.part.resize(static_cast<size_t>(rows));
      for (int64_t i = 0; i < rows; ++i)
        out.part[i] = static_cast<int32_t>((g.node_begin + i) % o.num_parts);
      out.part = shuffled(
          std::move(out.part),
          Rng(stream_key(o.seed, kRandomAssignTag + 1, static_cast<uint64_t>(in.comm.rank()),
                         static_cast<uint64_t>(in.comm.size()))));
    }
  } else if (o.num_parts == 1) {
    out.part.assign(static_cast<size_t>(rows), 0);
  } else {
    out.part = partition_across_ranks(in, strategy);
  }
  out.phases.emplace_back("assign", watch.seconds());
  return out;
}

int64_t distributed_edge_cut(const ShardGraph& graph, const std::vector<int32_t>& part,
                             DistComm& comm) {
  // Ask each source's owner for its part: (u) to owner(u), answered in the same order.
  const int ranks = comm.size();
  const BlockOwner owner(graph.num_nodes, ranks);
  const graph::Csr& in = graph.in_edges;
  std::vector<std::vector<int64_t>> ask(static_cast<size_t>(ranks));
  std::vector<int64_t> count(static_cast<size_t>(ranks), 0);
  for (int64_t u : in.indices) ++count[owner(u)];
  for (int r = 0; r < ranks; ++r) ask[r].reserve(static_cast<size_t>(count[r]));
  for (int64_t u : in.indices) ask[owner(u)].push_back(u);
  const std::vector<std::vector<int64_t>> parts =
      ask_ranks(std::move(ask), 1, comm,
                [&](const int64_t* u) -> int64_t { return part[*u - graph.node_begin]; });
  std::fill(count.begin(), count.end(), 0);
  int64_t cut = 0;
  for (int64_t v = 0; v < in.num_rows(); ++v)
    for (int64_t k = in.indptr[v]; k < in.indptr[v + 1]; ++k) {
      const int r = owner(in.indices[k]);
      cut += parts[r][count[r]++] != part[v];
    }
  comm.allreduce_sum(&cut, 1);
  return cut;
}

}  // namespace partita::partition
