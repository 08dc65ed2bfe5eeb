// The coarse-partition-refine partitioner (coarse_partition.h).
#include "coarse_partition.h"

#include <metis.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "collective.h"
#include "partita/core/error.h"
#include "rebalance.h"

namespace partita::partition {
namespace {

constexpr int kClusterRounds = 3;         // label propagation rounds per coarsening level
constexpr int kMaxLevels = 12;            // coarsening levels at most
constexpr double kStallRatio = 0.9;       // a level keeping > 90 % of its vertices ends coarsening
constexpr double kClusterCap = 1.5;       // cluster weight cap, times the average coarse vertex
constexpr int64_t kCoarsePerPart = 2000;  // coarse target: 2000 P vertices
constexpr int64_t kCoarseDegree = 256;    // gathered entries per coarse vertex, at most
constexpr double kMetisImbalance = 1.03;
constexpr int kRefineRounds = 8;

// The fine graph with 32-bit local ids: entries < rows are local vertices, rows + g is ghost g
// (ghost_global[g], sorted; ghosts of rank r are [ghost_begin[r], ghost_begin[r + 1])).
// send_list[r]: the local vertices rank r keeps as ghosts, in its ghost order.
struct LocalGraph {
  int64_t rows = 0, begin = 0;
  std::vector<int64_t> xadj;
  std::vector<int32_t> adj;
  std::vector<int64_t> ghost_global;
  std::vector<int64_t> ghost_begin;
  std::vector<std::vector<int32_t>> send_list;
};

LocalGraph localize(const DistAdjacency& g, DistComm& comm) {
  const int ranks = comm.size(), rank = comm.rank();
  LocalGraph lg;
  lg.begin = g.vtxdist[rank];
  lg.rows = g.vtxdist[rank + 1] - lg.begin;
  const int64_t n = g.vtxdist[ranks], end = lg.begin + lg.rows;
  PARTITA_CHECK(lg.rows < (int64_t{1} << 30), Error,
                "coarse partitioner: {} vertices on one rank (at most 2^30)", lg.rows);
  std::vector<uint64_t> seen(static_cast<size_t>((n + 63) / 64), 0);
  for (int64_t u : g.adjncy)
    if (u < lg.begin || u >= end) seen[u >> 6] |= uint64_t{1} << (u & 63);
  for (size_t w = 0; w < seen.size(); ++w)
    for (uint64_t bits = seen[w]; bits; bits &= bits - 1)
      lg.ghost_global.push_back(static_cast<int64_t>(w * 64) + __builtin_ctzll(bits));
  std::vector<uint64_t>().swap(seen);
  PARTITA_CHECK(lg.rows + static_cast<int64_t>(lg.ghost_global.size()) < (int64_t{1} << 31), Error,
                "coarse partitioner: too many ghost vertices on rank {}", rank);
  // The ghosts below global id u.
  auto ghosts_below = [&](int64_t u) {
    return std::lower_bound(lg.ghost_global.begin(), lg.ghost_global.end(), u) -
           lg.ghost_global.begin();
  };
  for (int r = 0; r <= ranks; ++r) lg.ghost_begin.push_back(ghosts_below(g.vtxdist[r]));
  lg.xadj = g.xadj;
  lg.adj.resize(g.adjncy.size());
  for (size_t k = 0; k < g.adjncy.size(); ++k) {
    const int64_t u = g.adjncy[k];
    lg.adj[k] =
        static_cast<int32_t>((u >= lg.begin && u < end) ? u - lg.begin : lg.rows + ghosts_below(u));
  }
  std::vector<std::vector<int64_t>> ask(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    ask[r].assign(lg.ghost_global.begin() + lg.ghost_begin[r],
                  lg.ghost_global.begin() + lg.ghost_begin[r + 1]);
  lg.send_list.resize(static_cast<size_t>(ranks));
  const std::vector<std::vector<int64_t>> asked = send_ints(std::move(ask), comm);
  for (int r = 0; r < ranks; ++r)
    for (int64_t id : asked[r]) {
      PARTITA_CHECK(id >= lg.begin && id < end, Error,
                    "internal: rank {} was asked for vertex {} outside its block", rank, id);
      lg.send_list[r].push_back(static_cast<int32_t>(id - lg.begin));
    }
  return lg;
}

// Every ghost's value of `local` (one value per local vertex), in ghost order.
template <typename T>
std::vector<T> ghost_values(const LocalGraph& lg, const std::vector<T>& local, DistComm& comm) {
  std::vector<std::vector<T>> send(lg.send_list.size());
  for (size_t r = 0; r < send.size(); ++r)
    for (int32_t v : lg.send_list[r]) send[r].push_back(local[v]);
  const std::vector<std::vector<T>> got = send_ints(std::move(send), comm);
  std::vector<T> out;
  out.reserve(lg.ghost_global.size());
  for (size_t r = 0; r < got.size(); ++r) {
    const size_t count = static_cast<size_t>(lg.ghost_begin[r + 1] - lg.ghost_begin[r]);
    PARTITA_CHECK(got[r].size() == count, Error,
                  "internal: rank {} sent {} ghost values, {} expected", r, got[r].size(), count);
    out.insert(out.end(), got[r].begin(), got[r].end());
  }
  return out;
}

// One level of the local clustering: a weighted graph over the block's clusters.
struct Level {
  int64_t n = 0;
  std::vector<int64_t> xadj;
  std::vector<int32_t> adj;
  std::vector<int64_t> ew;  // edge weights
  std::vector<int64_t> vw;  // n * ncon
};

// Size-constrained label propagation; returns cluster ids renumbered 0.. by first
// appearance in vertex order, and their count.
std::pair<std::vector<int32_t>, int64_t> cluster_level(const Level& l, int ncon,
                                                       const std::vector<int64_t>& cap) {
  const int64_t n = l.n;
  std::vector<int32_t> cluster(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) cluster[v] = static_cast<int32_t>(v);
  std::vector<int64_t> cw = l.vw;
  std::vector<int64_t> conn(static_cast<size_t>(n), 0);
  std::vector<int32_t> touched;
  auto fits = [&](int32_t c, int64_t v) {
    for (int k = 0; k < ncon; ++k)
      if (cw[c * ncon + k] + l.vw[v * ncon + k] > cap[k]) return false;
    return true;
  };
  for (int round = 0; round < kClusterRounds; ++round) {
    int64_t moved = 0;
    for (int64_t v = 0; v < n; ++v) {
      const int32_t own = cluster[v];
      touched.clear();
      for (int64_t e = l.xadj[v]; e < l.xadj[v + 1]; ++e) {
        const int32_t c = cluster[l.adj[e]];
        if (conn[c] == 0) touched.push_back(c);
        conn[c] += l.ew[e];
      }
      int32_t best = own;
      int64_t best_w = conn[own];
      for (int32_t c : touched) {
        if (c == own) continue;
        const bool better = conn[c] > best_w || (conn[c] == best_w && best != own && c < best);
        if (better && fits(c, v)) {
          best = c;
          best_w = conn[c];
        }
      }
      for (int32_t c : touched) conn[c] = 0;
      if (best == own) continue;
      for (int k = 0; k < ncon; ++k) {
        cw[own * ncon + k] -= l.vw[v * ncon + k];
        cw[best * ncon + k] += l.vw[v * ncon + k];
      }
      cluster[v] = best;
      ++moved;
    }
    if (moved == 0) break;
  }
  // Leftovers: vertices alone in their cluster (no neighbour, or their neighbours' clusters
  // were full) are grouped in id order while a group fits the cap, so that the next level
  // still shrinks (METIS merges unmatched vertices the same way).
  std::vector<int32_t> id(static_cast<size_t>(n), -1);
  std::vector<int32_t> members(static_cast<size_t>(n), 0);
  for (int64_t v = 0; v < n; ++v) ++members[cluster[v]];
  std::vector<int64_t> group(static_cast<size_t>(ncon), 0);
  int32_t next = 0, group_id = -1;
  for (int64_t v = 0; v < n; ++v) {
    const int32_t c = cluster[v];
    if (id[c] < 0 && members[c] > 1) id[c] = next++;
    if (id[c] < 0) {  // alone: joins the open group, or opens one when it does not fit
      bool fits = group_id >= 0;
      for (int k = 0; k < ncon && fits; ++k) fits = group[k] + cw[c * ncon + k] <= cap[k];
      if (!fits) {
        group_id = next++;
        std::fill(group.begin(), group.end(), 0);
      }
      for (int k = 0; k < ncon; ++k) group[k] += cw[c * ncon + k];
      id[c] = group_id;
    }
    cluster[v] = id[c];
  }
  return {std::move(cluster), next};
}

// The vertices of each of the `count` clusters in id order, and where each starts: cluster
// c's are at [start[c], start[c + 1]).
std::pair<std::vector<int32_t>, std::vector<int64_t>> cluster_members(
    const std::vector<int32_t>& cluster, int64_t count) {
  std::vector<int64_t> start(static_cast<size_t>(count) + 1, 0);
  for (int32_t c : cluster) ++start[c + 1];
  for (int64_t c = 0; c < count; ++c) start[c + 1] += start[c];
  std::vector<int32_t> members(cluster.size());
  std::vector<int64_t> cursor(start.begin(), start.end() - 1);
  for (size_t v = 0; v < cluster.size(); ++v)
    members[cursor[cluster[v]]++] = static_cast<int32_t>(v);
  return {std::move(members), std::move(start)};
}

// The level above `l` for the clustering `cluster` (count clusters).
Level contract(const Level& l, int ncon, const std::vector<int32_t>& cluster, int64_t count) {
  Level up;
  up.n = count;
  up.vw.assign(static_cast<size_t>(count * ncon), 0);
  for (int64_t v = 0; v < l.n; ++v)
    for (int k = 0; k < ncon; ++k) up.vw[cluster[v] * ncon + k] += l.vw[v * ncon + k];
  const auto [members, start] = cluster_members(cluster, count);
  std::vector<int64_t> conn(static_cast<size_t>(count), 0);
  std::vector<int32_t> touched;
  up.xadj.assign(static_cast<size_t>(count) + 1, 0);
  for (int64_t c = 0; c < count; ++c) {
    touched.clear();
    for (int64_t i = start[c]; i < start[c + 1]; ++i) {
      const int32_t v = members[i];
      for (int64_t e = l.xadj[v]; e < l.xadj[v + 1]; ++e) {
        const int32_t d = cluster[l.adj[e]];
        if (d == c) continue;
        if (conn[d] == 0) touched.push_back(d);
        conn[d] += l.ew[e];
      }
    }
    for (int32_t d : touched) {
      up.adj.push_back(d);
      up.ew.push_back(conn[d]);
      conn[d] = 0;
    }
    up.xadj[c + 1] = static_cast<int64_t>(up.adj.size());
  }
  return up;
}

// Part of each coarse vertex: METIS on rank 0 of the gathered coarse graph. This rank's
// coarse vertices: vw [count * ncon], xadj [count + 1], adj [global coarse ids], ew.
// `stats`: the gathered graph's figures and the levels (this rank's given), maxima over ranks.
std::vector<int32_t> partition_gathered(int64_t count, const std::vector<int64_t>& vw,
                                        const std::vector<int64_t>& xadj,
                                        const std::vector<int64_t>& adj,
                                        const std::vector<int64_t>& ew, int ncon, int num_parts,
                                        uint64_t seed, const std::vector<int64_t>& offset,
                                        DistComm& comm, CoarseStats& stats) {
  const int ranks = comm.size();
  // Every rank's `mine` on rank 0 (nothing elsewhere).
  auto to_lead = [&](const std::vector<int64_t>& mine) {
    std::vector<std::vector<int64_t>> send(static_cast<size_t>(ranks));
    send[0] = mine;
    return send_ints(std::move(send), comm);
  };
  std::vector<std::vector<int64_t>> all_vw = to_lead(vw), all_xadj = to_lead(xadj),
                                    all_adj = to_lead(adj), all_ew = to_lead(ew);
  std::vector<std::vector<idx_t>> back(static_cast<size_t>(ranks));
  std::string error;
  if (comm.rank() == 0) {
    const int64_t nc = offset[ranks];
    int64_t entries = 0;
    for (const std::vector<int64_t>& theirs : all_adj) entries += theirs.size();
    constexpr int64_t kIdxMax = std::numeric_limits<idx_t>::max();
    if (nc >= kIdxMax || entries >= kIdxMax) {
      error = fmt::format(
          "coarse partitioner: the coarse graph ({} vertices, {} entries) "
          "exceeds METIS's 32-bit ids",
          nc, entries);
    } else {
      std::vector<idx_t> g_xadj{0}, g_adj, g_ew, g_vw;
      g_xadj.reserve(static_cast<size_t>(nc) + 1);
      g_vw.reserve(static_cast<size_t>(nc * ncon));
      g_adj.reserve(static_cast<size_t>(entries));
      g_ew.reserve(static_cast<size_t>(entries));
      auto weight = [](int64_t w) { return static_cast<idx_t>(std::min(w, kIdxMax / 4)); };
      for (int r = 0; r < ranks; ++r) {
        for (int64_t w : all_vw[r]) g_vw.push_back(weight(w));
        const idx_t base = static_cast<idx_t>(g_adj.size());
        for (size_t i = 1; i < all_xadj[r].size(); ++i)
          g_xadj.push_back(base + static_cast<idx_t>(all_xadj[r][i]));
        for (int64_t u : all_adj[r]) g_adj.push_back(static_cast<idx_t>(u));
        for (int64_t w : all_ew[r]) g_ew.push_back(weight(w));
        for (auto* arrays : {&all_vw, &all_xadj, &all_adj, &all_ew})
          std::vector<int64_t>().swap((*arrays)[r]);
      }
      std::vector<idx_t> part(static_cast<size_t>(nc), 0);
      if (nc > 0) {
        idx_t options[METIS_NOPTIONS];
        METIS_SetDefaultOptions(options);
        options[METIS_OPTION_NUMBERING] = 0;
        options[METIS_OPTION_SEED] = static_cast<idx_t>(seed & 0x7fffffffULL);
        idx_t nvtxs = static_cast<idx_t>(nc), ncon_arg = ncon, nparts = num_parts, objval = 0;
        std::vector<real_t> ubvec(static_cast<size_t>(ncon), static_cast<real_t>(kMetisImbalance));
        const int status = METIS_PartGraphKway(&nvtxs, &ncon_arg, g_xadj.data(), g_adj.data(),
                                               g_vw.data(), nullptr, g_ew.data(), &nparts, nullptr,
                                               ubvec.data(), options, &objval, part.data());
        if (status != METIS_OK)
          error = fmt::format(
              "coarse partitioner: METIS_PartGraphKway failed ({}) on the coarse "
              "graph ({} vertices, {} entries)",
              status, nc, entries);
      }
      stats.coarse_vertices = nc;
      stats.coarse_edges = entries;
      for (int r = 0; r < ranks; ++r)
        back[r].assign(part.begin() + offset[r], part.begin() + offset[r + 1]);
    }
  }
  comm.agree(error);
  std::vector<int32_t> part = send_ints(std::move(back), comm)[0];  // idx_t is int32_t
  PARTITA_CHECK(static_cast<int64_t>(part.size()) == count, Error,
                "internal: {} coarse parts for {} coarse vertices", part.size(), count);
  int64_t figures[3] = {stats.levels, stats.coarse_vertices, stats.coarse_edges};
  comm.allreduce_max(figures, 3);
  stats.levels = static_cast<int>(figures[0]);
  stats.coarse_vertices = figures[1];
  stats.coarse_edges = figures[2];
  return part;
}

// Boundary label propagation (coarse_partition.h, step 3).
// `total`: every constraint's total weight over all ranks.
void refine(const LocalGraph& lg, const std::vector<std::vector<int64_t>>& weight,
            const std::vector<int64_t>& total, int num_parts, double limit,
            std::vector<int32_t>& part, DistComm& comm, CoarseStats& stats) {
  const int ncon = static_cast<int>(weight.size());
  const int ranks = comm.size();
  std::vector<int64_t> conn(static_cast<size_t>(num_parts), 0);
  std::vector<int32_t> touched;
  std::vector<int64_t> quota(static_cast<size_t>(ncon * num_parts)), added(quota.size());
  int quiet = 0;
  for (int round = 0; round < kRefineRounds && quiet < 2; ++round) {
    const std::vector<int32_t> ghost = ghost_values(lg, part, comm);
    const std::vector<int64_t> load = sum_over_ranks(local_loads(weight, part, num_parts), comm);
    for (int c = 0; c < ncon; ++c) {  // a part's room below the cap, per rank
      const int64_t cap = static_cast<int64_t>(limit * static_cast<double>(total[c]) / num_parts);
      for (int p = 0; p < num_parts; ++p)
        quota[c * num_parts + p] = std::max<int64_t>(0, cap - load[c * num_parts + p]) / ranks;
    }
    std::fill(added.begin(), added.end(), 0);
    const bool upward = round % 2 == 0;
    int64_t moves = 0;
    for (int64_t v = 0; v < lg.rows; ++v) {
      const int32_t own = part[v];
      touched.clear();
      for (int64_t e = lg.xadj[v]; e < lg.xadj[v + 1]; ++e) {
        const int32_t u = lg.adj[e];
        const int32_t p = u < lg.rows ? part[u] : ghost[u - lg.rows];
        if (conn[p] == 0) touched.push_back(p);
        ++conn[p];
      }
      int32_t best = -1;
      int64_t best_w = conn[own];
      for (int32_t p : touched) {
        if (p == own || (upward ? p < own : p > own)) continue;
        // A move needs more neighbours in p than in the own part; ties go to the lowest p.
        const bool better =
            best < 0 ? conn[p] > best_w : (conn[p] > best_w || (conn[p] == best_w && p < best));
        if (!better) continue;
        bool fits = true;
        for (int c = 0; c < ncon && fits; ++c)
          fits = added[c * num_parts + p] + weight[c][v] <= quota[c * num_parts + p];
        if (!fits) continue;
        best = p;
        best_w = conn[p];
      }
      for (int32_t p : touched) conn[p] = 0;
      if (best < 0) continue;
      for (int c = 0; c < ncon; ++c) added[c * num_parts + best] += weight[c][v];
      part[v] = best;
      ++moves;
    }
    comm.allreduce_sum(&moves, 1);
    stats.refine_moves += moves;
    ++stats.refine_rounds;
    quiet = moves == 0 ? quiet + 1 : 0;
  }
}

}  // namespace

std::vector<int32_t> coarse_partition(DistAdjacency graph,
                                      const std::vector<std::vector<int64_t>>& weight,
                                      const CoarseOptions& options, DistComm& comm,
                                      CoarseStats& stats) {
  const int num_parts = options.num_parts;
  const int ranks = comm.size(), rank = comm.rank();
  const int ncon = static_cast<int>(weight.size());
  PARTITA_CHECK(ncon >= 1, Error, "internal: coarse_partition needs a constraint");
  const LocalGraph lg = localize(graph, comm);
  const int64_t n = graph.vtxdist[ranks];
  graph = DistAdjacency{};  // lg holds it with 32-bit ids

  // 1. Local coarsening.
  std::vector<int64_t> total(static_cast<size_t>(ncon), 0);
  Level level;
  level.n = lg.rows;
  level.vw.resize(static_cast<size_t>(lg.rows * ncon));
  for (int64_t v = 0; v < lg.rows; ++v)
    for (int c = 0; c < ncon; ++c) {
      level.vw[v * ncon + c] = weight[c][v];
      total[c] += weight[c][v];
    }
  comm.allreduce_sum(total.data(), total.size());
  const int64_t target = kCoarsePerPart * num_parts;  // coarse vertices over all ranks
  std::vector<int64_t> cap(static_cast<size_t>(ncon));
  for (int c = 0; c < ncon; ++c)
    cap[c] = std::max<int64_t>(1, static_cast<int64_t>(kClusterCap * total[c] / target));
  const int64_t local_target = std::max<int64_t>(1, target * lg.rows / std::max<int64_t>(n, 1));
  level.xadj.assign(static_cast<size_t>(lg.rows) + 1, 0);
  for (int64_t v = 0; v < lg.rows; ++v) {
    for (int64_t e = lg.xadj[v]; e < lg.xadj[v + 1]; ++e)
      if (lg.adj[e] < lg.rows) level.adj.push_back(lg.adj[e]);
    level.xadj[v + 1] = static_cast<int64_t>(level.adj.size());
  }
  level.ew.assign(level.adj.size(), 1);
  std::vector<int32_t> fine_to_coarse(static_cast<size_t>(lg.rows));
  for (int64_t v = 0; v < lg.rows; ++v) fine_to_coarse[v] = static_cast<int32_t>(v);
  int levels = 0;
  while (level.n > local_target && levels < kMaxLevels) {
    const auto [cluster, count] = cluster_level(level, ncon, cap);
    if (count > kStallRatio * static_cast<double>(level.n)) break;
    for (int32_t& c : fine_to_coarse) c = cluster[c];
    level = contract(level, ncon, cluster, count);
    ++levels;
  }
  const int64_t count = level.n;
  const std::vector<int64_t> vw = std::move(level.vw);
  level = Level{};

  // 2. The coarse graph with global ids; METIS on rank 0.
  std::vector<int64_t> offset{0};  // rank r's coarse vertices: [offset[r], offset[r + 1])
  for (const std::vector<int64_t>& theirs : gather_ints({count}, comm))
    offset.push_back(offset.back() + theirs[0]);
  std::vector<int64_t> coarse_id(static_cast<size_t>(lg.rows));
  for (int64_t v = 0; v < lg.rows; ++v) coarse_id[v] = offset[rank] + fine_to_coarse[v];
  const std::vector<int64_t> ghost_coarse = ghost_values(lg, coarse_id, comm);
  std::vector<int64_t> xadj(static_cast<size_t>(count) + 1, 0), adj, ew;
  {
    const auto [members, start] = cluster_members(fine_to_coarse, count);
    std::vector<int64_t> ids;
    for (int64_t c = 0; c < count; ++c) {
      ids.clear();
      const int64_t self = offset[rank] + c;
      for (int64_t i = start[c]; i < start[c + 1]; ++i) {
        const int32_t v = members[i];
        for (int64_t e = lg.xadj[v]; e < lg.xadj[v + 1]; ++e) {
          const int32_t u = lg.adj[e];
          const int64_t d = u < lg.rows ? coarse_id[u] : ghost_coarse[u - lg.rows];
          if (d != self) ids.push_back(d);
        }
      }
      std::sort(ids.begin(), ids.end());
      for (size_t i = 0; i < ids.size();) {
        size_t j = i;
        while (j < ids.size() && ids[j] == ids[i]) ++j;
        adj.push_back(ids[i]);
        ew.push_back(static_cast<int64_t>(j - i));
        i = j;
      }
      xadj[c + 1] = static_cast<int64_t>(adj.size());
    }
  }
  // Sparsify: keep the edges of weight >= t, the smallest t (1..64) leaving at most
  // kCoarseDegree entries per coarse vertex over all ranks. Weights are symmetric, so the
  // kept graph is too; dropped (light) edges still count in the refinement.
  constexpr int kBuckets = 64;
  std::vector<int64_t> hist(kBuckets + 1, 0);
  for (int64_t w : ew) ++hist[std::min<int64_t>(w, kBuckets)];
  comm.allreduce_sum(hist.data(), hist.size());
  const int64_t budget = kCoarseDegree * offset[ranks];
  int64_t kept = 0;
  int threshold = kBuckets + 1;
  for (int t = kBuckets; t >= 1; --t) {
    if (kept + hist[t] > budget) break;
    kept += hist[t];
    threshold = t;
  }
  if (threshold > 1) {
    size_t out = 0;
    int64_t b = 0;  // the row's original begin (xadj[c] is already rewritten)
    for (int64_t c = 0; c < count; ++c) {
      const int64_t e = xadj[c + 1];
      for (int64_t k = b; k < e; ++k)
        if (ew[k] >= threshold) {
          adj[out] = adj[k];
          ew[out++] = ew[k];
        }
      xadj[c + 1] = static_cast<int64_t>(out);
      b = e;
    }
    adj.resize(out);
    ew.resize(out);
  }
  stats.levels = levels;  // the max over ranks once the coarse graph is partitioned
  const std::vector<int32_t> coarse_part = partition_gathered(
      count, vw, xadj, adj, ew, ncon, num_parts, options.seed, offset, comm, stats);
  std::vector<int64_t>().swap(adj);
  std::vector<int64_t>().swap(ew);

  // 3. Project and refine.
  std::vector<int32_t> part(static_cast<size_t>(lg.rows));
  for (int64_t v = 0; v < lg.rows; ++v) part[v] = coarse_part[fine_to_coarse[v]];
  refine(lg, weight, total, num_parts, options.limit, part, comm, stats);
  return part;
}

}  // namespace partita::partition
