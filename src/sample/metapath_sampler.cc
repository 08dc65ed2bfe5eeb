#include "partita/sample/metapath_sampler.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <thread>
#include <utility>

#include "partita/core/error.h"
#include "partita/core/random.h"

namespace partita::sample {
namespace {

// One walk of a frontier node, at its current end.
struct Head {
  int64_t origin = 0;  // index of the frontier node it started from
  int64_t node = 0;    // global id it has reached
  int64_t budget = 0;  // walks it still carries (-1: every neighbour)
  int64_t time = 0;    // temporal: its frontier node's time (0 otherwise)
};

// The walks of one step that carry the same budget: one inner call.
struct BudgetGroup {
  // Distinct (node, time) entries in first-appearance order (time 0 when not temporal: a
  // node reached at two times is two entries, and its samples may differ).
  std::vector<int64_t> nodes, times;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> index;  // entry -> position
  NeighborSample sample;
  std::vector<int64_t> offsets;  // into sample.neighbors, one per node
};

// The endpoints of metapath m of each frontier node (CSR-like), deduplicated.
struct Endpoints {
  std::vector<int64_t> counts;
  std::vector<int64_t> nodes;
};

}  // namespace

uint64_t metapath_step_key(uint64_t hop_key, int metapath, int step, int64_t budget) {
  const uint64_t b =
      budget < 0 ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(budget);
  return stream_key(hop_key, static_cast<uint64_t>(metapath), static_cast<uint64_t>(step), b);
}

MetapathSampler::MetapathSampler(NeighborSampler& inner, std::vector<Metapath> metapaths,
                                 int num_relations)
    : inner_(inner), metapaths_(std::move(metapaths)), num_relations_(num_relations) {
  PARTITA_CHECK(!metapaths_.empty(), Error, "metapath sampler: no metapath");
  for (const Metapath& m : metapaths_) {
    PARTITA_CHECK(!m.relations.empty(), Error, "metapath sampler: metapath '{}' has no step",
                  m.name);
    for (int32_t r : m.relations)
      PARTITA_CHECK(r >= 0 && r < num_relations_, Error,
                    "metapath sampler: metapath '{}' has relation {} of {}", m.name, r,
                    num_relations_);
  }
}

namespace {

// Runs work(0..n-1), all at once: n-1 on threads of their own, one on the caller's. The
// inner calls are independent (each result depends on its own request only), so running
// them together changes no result, only the latency: one round of remote requests per step
// instead of one per call. Rethrows the first failure after every call has ended.
void run_all(size_t n, const std::function<void(size_t)>& work) {
  if (n == 1) return work(0);
  std::vector<std::exception_ptr> failures(n);
  std::vector<std::thread> threads;
  threads.reserve(n - 1);
  for (size_t i = 1; i < n; ++i) {
    threads.emplace_back([&, i] {
      try {
        work(i);
      } catch (...) {
        failures[i] = std::current_exception();
      }
    });
  }
  try {
    work(0);
  } catch (...) {
    failures[0] = std::current_exception();
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& f : failures)
    if (f) std::rethrow_exception(f);
}

// Walks metapath `m` (index `index`) from every frontier node with budget `fanout`.
Endpoints walk(NeighborSampler& inner, const HopRequest& request, const Metapath& m, int index,
               int64_t fanout, int num_relations) {
  const int64_t n = static_cast<int64_t>(request.frontier.size());
  Endpoints out;
  out.counts.assign(static_cast<size_t>(n), 0);
  if (fanout == 0) return out;
  const bool temporal = !request.times.empty();
  std::vector<Head> heads(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    heads[static_cast<size_t>(i)] = {i, request.frontier[i], fanout,
                                     temporal ? request.times[i] : 0};
  for (size_t step = 0; step < m.relations.size() && !heads.empty(); ++step) {
    const int32_t relation = m.relations[step];
    // Ordered by budget so the inner calls come in one order on every rank (not needed
    // for the result, which does not depend on the call order, but easier to trace).
    std::map<int64_t, BudgetGroup> groups;
    for (const Head& h : heads) {
      BudgetGroup& g = groups[h.budget];
      if (g.index.try_emplace(std::make_pair(h.node, h.time), static_cast<int64_t>(g.nodes.size()))
              .second) {
        g.nodes.push_back(h.node);
        g.times.push_back(h.time);
      }
    }
    std::vector<std::pair<int64_t, BudgetGroup*>> calls;
    for (auto& [budget, g] : groups) calls.emplace_back(budget, &g);
    run_all(calls.size(), [&](size_t c) {
      const int64_t budget = calls[c].first;
      BudgetGroup& g = *calls[c].second;
      std::vector<int64_t> fanouts(static_cast<size_t>(num_relations), 0);
      fanouts[static_cast<size_t>(relation)] = budget;
      HopRequest inner_request;
      inner_request.frontier = g.nodes;
      if (temporal) inner_request.times = g.times;
      inner_request.hop = request.hop;
      inner_request.hop_key =
          metapath_step_key(request.hop_key, index, static_cast<int>(step), budget);
      inner_request.fanout = budget;
      inner_request.relation_fanouts = fanouts;
      inner.sample_hop(inner_request, &g.sample);
      PARTITA_CHECK(g.sample.counts.size() == g.nodes.size(), Error,
                    "metapath sampler: the inner sampler answered {} counts for {} nodes",
                    g.sample.counts.size(), g.nodes.size());
      g.offsets.resize(g.nodes.size());
      int64_t offset = 0;
      for (size_t i = 0; i < g.nodes.size(); ++i) {
        g.offsets[i] = offset;
        offset += g.sample.counts[i];
      }
      PARTITA_CHECK(offset == static_cast<int64_t>(g.sample.neighbors.size()), Error,
                    "metapath sampler: the inner sampler's counts do not add up");
    });
    std::vector<Head> next;
    next.reserve(heads.size());
    for (const Head& h : heads) {
      const BudgetGroup& g = groups.at(h.budget);
      const size_t at = static_cast<size_t>(g.index.at(std::make_pair(h.node, h.time)));
      const int64_t k = g.sample.counts[at];
      const int64_t* picked = g.sample.neighbors.data() + g.offsets[at];
      for (int64_t i = 0; i < k; ++i) {
        const int64_t child = h.budget < 0 ? -1 : h.budget / k + (i < h.budget % k ? 1 : 0);
        next.push_back({h.origin, picked[i], child, h.time});
      }
    }
    heads = std::move(next);
  }
  // Heads stay in origin order (each step expands them in place): dedupe per origin.
  absl::flat_hash_set<int64_t> seen;
  int64_t current = -1;
  for (const Head& h : heads) {
    if (h.origin != current) {
      seen.clear();
      current = h.origin;
    }
    if (!seen.insert(h.node).second) continue;
    out.nodes.push_back(h.node);
    ++out.counts[static_cast<size_t>(h.origin)];
  }
  return out;
}

}  // namespace

void MetapathSampler::sample_hop(const HopRequest& request, NeighborSample* out) {
  const size_t num_metapaths = metapaths_.size();
  PARTITA_CHECK(request.relation_fanouts.empty() ||
                    static_cast<size_t>(request.relation_fanouts.size()) == num_metapaths,
                Error, "metapath sampler: {} fanouts for {} metapaths",
                request.relation_fanouts.size(), num_metapaths);
  std::vector<int64_t> fanouts(num_metapaths);
  for (size_t m = 0; m < num_metapaths; ++m) {
    fanouts[m] = request.relation_fanouts.empty() ? request.fanout : request.relation_fanouts[m];
    PARTITA_CHECK(fanouts[m] >= -1, Error, "metapath sampler: fanout {} of metapath '{}'",
                  fanouts[m], metapaths_[m].name);
  }
  PARTITA_CHECK(request.times.empty() || request.times.size() == request.frontier.size(), Error,
                "metapath sampler: {} times for {} frontier nodes", request.times.size(),
                request.frontier.size());
  std::vector<Endpoints> per_metapath(num_metapaths);
  run_all(num_metapaths, [&](size_t m) {
    per_metapath[m] =
        walk(inner_, request, metapaths_[m], static_cast<int>(m), fanouts[m], num_relations_);
  });
  const size_t n = static_cast<size_t>(request.frontier.size());
  out->counts.assign(n, 0);
  out->neighbors.clear();
  out->relations.clear();
  std::vector<int64_t> cursor(num_metapaths, 0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t m = 0; m < num_metapaths; ++m) {
      const Endpoints& e = per_metapath[m];
      const int64_t k = e.counts[i];
      const int64_t* first = e.nodes.data() + cursor[m];
      out->neighbors.insert(out->neighbors.end(), first, first + k);
      out->relations.insert(out->relations.end(), static_cast<size_t>(k), static_cast<int32_t>(m));
      out->counts[i] += k;
      cursor[m] += k;
    }
  }
}

}  // namespace partita::sample
