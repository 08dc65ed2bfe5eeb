// A deterministic distributed rebalancing pass for the constraints PT-Scotch cannot
// balance itself (it takes one vertex weight): see rebalance.h.
#include "rebalance.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "collective.h"
#include "partita/core/error.h"
#include "partita/core/log.h"

namespace partita::partition {
std::vector<int64_t> local_loads(const std::vector<std::vector<int64_t>>& weight,
                                 const std::vector<int32_t>& part, size_t P) {
  std::vector<int64_t> load(weight.size() * P, 0);
  for (size_t c = 0; c < weight.size(); ++c)
    for (size_t v = 0; v < part.size(); ++v) load[c * P + part[v]] += weight[c][v];
  return load;
}

RebalanceStats rebalance_parts(const std::vector<std::vector<int64_t>>& weight,
                               std::vector<int32_t>& part, const RebalanceOptions& options,
                               DistComm& comm) {
  const int num_parts = options.num_parts, max_rounds = options.max_rounds;
  const int ncon = static_cast<int>(weight.size());
  const size_t n = part.size();
  const size_t P = static_cast<size_t>(num_parts);
  for (const auto& w : weight)
    PARTITA_CHECK(w.size() == n, Error, "internal: rebalance weights of {} nodes for {}", w.size(),
                  n);
  RebalanceStats stats;
  // A margin below the limit, so that rounding and the next constraint's moves keep it.
  const double aim = 1.0 + (options.limit - 1.0) * 0.8;
  const double shed_aim = 1.0 + (options.limit - 1.0) * 0.4;
  bool stuck = false;  // a round moved nothing: nothing fits anywhere
  for (int round = 0;; ++round) {
    // Loads: this rank's [c][p], then the global ones; the imbalance they make.
    const std::vector<int64_t> mine = local_loads(weight, part, P);
    const std::vector<int64_t> load = sum_over_ranks(mine, comm);
    std::vector<int64_t> cap(static_cast<size_t>(ncon));
    stats.imbalance.assign(static_cast<size_t>(ncon), 1.0);
    bool balanced = true;
    for (int c = 0; c < ncon; ++c) {
      const auto first = load.begin() + c * P, last = first + P;
      const int64_t total = std::accumulate(first, last, int64_t{0});
      const int64_t largest = *std::max_element(first, last);
      cap[c] = static_cast<int64_t>(std::floor(aim * static_cast<double>(total) / num_parts));
      if (total == 0) continue;  // nothing to balance
      const double mean = static_cast<double>(total) / num_parts;
      if (static_cast<double>(largest) > options.limit * mean) balanced = false;
      stats.imbalance[c] = static_cast<double>(largest) * num_parts / static_cast<double>(total);
    }
    if (balanced || stuck || round >= max_rounds) break;
    ++stats.rounds;
    // A part sheds above `shed_at` (below the cap, so parts filled up to the cap by one
    // round's moves pass weight on in the next), each rank its share by its share of the
    // part's load. The room below the cap is split among ranks by their share of the
    // total demand, so the ranks that must move get the room.
    std::vector<int64_t> need(static_cast<size_t>(ncon) * P, 0), room(need.size(), 0);
    double demand = 0;
    for (int c = 0; c < ncon; ++c) {
      const int64_t shed_at = static_cast<int64_t>(std::floor(cap[c] / aim * shed_aim));
      for (size_t p = 0; p < P; ++p) {
        const int64_t l = load[c * P + p];
        if (l <= shed_at || l == 0) continue;
        const double share = static_cast<double>(mine[c * P + p]) / static_cast<double>(l);
        need[c * P + p] = static_cast<int64_t>(std::ceil(share * static_cast<double>(l - shed_at)));
        if (cap[c] > 0)
          demand += static_cast<double>(need[c * P + p]) / static_cast<double>(cap[c]);
      }
    }
    const int64_t my_demand = static_cast<int64_t>(demand * 1e6);
    const int64_t all_demand = sum_over_ranks({my_demand}, comm)[0];
    const double room_share =
        all_demand > 0 ? static_cast<double>(my_demand) / static_cast<double>(all_demand) : 0;
    for (int c = 0; c < ncon; ++c)
      for (size_t p = 0; p < P; ++p)
        if (load[c * P + p] < cap[c])
          room[c * P + p] = static_cast<int64_t>(
              std::floor(static_cast<double>(cap[c] - load[c * P + p]) * room_share));
    // This rank's nodes of each part, in id order, for swap partners.
    std::vector<std::vector<size_t>> members(P);
    for (size_t v = 0; v < n; ++v) members[part[v]].push_back(v);
    std::vector<size_t> cursor(P, 0);
    // Whether moving weights delta (added to q, taken from p) fits q's room and p's (for
    // constraints p is not shedding).
    auto fits = [&](size_t q, size_t p, const std::vector<int64_t>& delta) {
      for (int c = 0; c < ncon; ++c) {
        if (delta[c] > 0 && room[c * P + q] < delta[c]) return false;
        if (delta[c] < 0 && need[c * P + p] <= 0 && room[c * P + p] < -delta[c]) return false;
      }
      return true;
    };
    auto apply = [&](size_t q, size_t p, const std::vector<int64_t>& delta) {
      for (int c = 0; c < ncon; ++c) {
        room[c * P + q] -= delta[c];
        if (need[c * P + p] > 0)
          need[c * P + p] -= delta[c];
        else
          room[c * P + p] += delta[c];
        if (need[c * P + q] > 0) need[c * P + q] += delta[c];
      }
    };
    int64_t moved = 0;
    std::vector<int64_t> delta(static_cast<size_t>(ncon));
    for (size_t v = 0; v < n; ++v) {
      const size_t p = static_cast<size_t>(part[v]);
      int shed = -1;  // a constraint v's part must shed and v carries
      for (int c = 0; c < ncon && shed < 0; ++c)
        if (need[c * P + p] > 0 && weight[c][v] > 0) shed = c;
      if (shed < 0) continue;
      // A plain move to the part with the most relative room that takes v everywhere.
      int best = -1;
      double best_room = -1;
      for (int c = 0; c < ncon; ++c) delta[c] = weight[c][v];
      for (size_t q = 0; q < P; ++q) {
        if (q == p || !fits(q, p, delta)) continue;
        double slack = 1e300;
        for (int c = 0; c < ncon; ++c)
          if (cap[c] > 0)
            slack = std::min(slack, static_cast<double>(room[c * P + q] - delta[c]) / cap[c]);
        if (slack > best_room) {
          best_room = slack;
          best = static_cast<int>(q);
        }
      }
      if (best >= 0) {
        apply(static_cast<size_t>(best), p, delta);
        part[v] = best;
        ++moved;
        continue;
      }
      // Else a swap: v goes to q, and q's next local node u that carries less of the shed
      // constraint comes to p, when both fit (q with the lowest load of `shed` first).
      std::vector<size_t> order(P);
      std::iota(order.begin(), order.end(), size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return load[shed * P + a] < load[shed * P + b]; });
      for (size_t q : order) {
        if (q == p || load[shed * P + q] > cap[shed]) continue;
        bool done = false;
        for (size_t& k = cursor[q]; k < members[q].size() && !done; ++k) {
          const size_t u = members[q][k];
          if (static_cast<size_t>(part[u]) != q || weight[shed][u] >= weight[shed][v]) continue;
          for (int c = 0; c < ncon; ++c) delta[c] = weight[c][v] - weight[c][u];
          if (!fits(q, p, delta)) continue;
          apply(q, p, delta);
          part[v] = static_cast<int32_t>(q);
          part[u] = static_cast<int32_t>(p);
          moved += 2;
          done = true;
        }
        if (done) break;
      }
    }
    const int64_t total_moved = sum_over_ranks({moved}, comm)[0];
    stats.moved += total_moved;
    stuck = total_moved == 0;
  }
  return stats;
}

int fill_empty_parts(int64_t node_begin, std::vector<int32_t>& part, int num_parts,
                     DistComm& comm) {
  std::vector<int64_t> count(static_cast<size_t>(num_parts), 0);
  for (int32_t p : part) ++count[p];
  comm.allreduce_sum(count.data(), count.size());
  const int64_t node_end = node_begin + static_cast<int64_t>(part.size());
  int filled = 0;
  for (int e = 0; e < num_parts; ++e) {
    if (count[e] > 0) continue;
    const int donor =
        static_cast<int>(std::max_element(count.begin(), count.end()) - count.begin());
    int64_t highest = -1;
    for (int64_t i = static_cast<int64_t>(part.size()) - 1; i >= 0 && highest < 0; --i)
      if (part[i] == donor) highest = node_begin + i;
    comm.allreduce_max(&highest, 1);
    if (highest >= node_begin && highest < node_end) part[highest - node_begin] = e;
    --count[donor];
    ++count[e];
    ++filled;
  }
  return filled;
}

std::vector<std::vector<int64_t>> constraint_weights(ArrayView<const int64_t> in_degree_indptr,
                                                     int64_t node_begin,
                                                     ArrayView<const int64_t> train_idx,
                                                     const MetisAssignOptions& options,
                                                     DistComm& comm) {
  const int64_t rows = in_degree_indptr.size() - 1;
  std::vector<std::vector<int64_t>> weight{std::vector<int64_t>(static_cast<size_t>(rows), 1)};
  int64_t totals[2] = {static_cast<int64_t>(train_idx.size()),
                       in_degree_indptr[rows] - in_degree_indptr[0]};
  comm.allreduce_sum(totals, 2);
  const bool lead = comm.rank() == 0;
  if (options.balance_train && totals[0] == 0 && lead)
    log_warning("`balance_train`: the dataset has no training nodes; constraint ignored");
  if (options.balance_train && totals[0] > 0) {
    weight.emplace_back(static_cast<size_t>(rows), 0);
    for (int64_t t : train_idx) weight.back()[t - node_begin] = 1;
  }
  if (options.balance_edges && totals[1] == 0 && lead)
    log_warning("`balance_edges`: the graph has no edges; constraint ignored");
  if (options.balance_edges && totals[1] > 0) {
    weight.emplace_back(static_cast<size_t>(rows));
    for (int64_t v = 0; v < rows; ++v)
      weight.back()[v] = in_degree_indptr[v + 1] - in_degree_indptr[v];
  }
  return weight;
}

}  // namespace partita::partition
