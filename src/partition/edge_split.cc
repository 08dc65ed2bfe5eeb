// Sampling link-prediction splits: units held out, negatives, the remaining graph.
#include "partita/partition/edge_split.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <unordered_set>
#include <utility>

#include "edge_split_draw.h"
#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/core/random.h"

namespace partita::partition {
namespace {

using Pair = std::pair<int64_t, int64_t>;

struct PairHash {
  size_t operator()(const Pair& p) const {
    return static_cast<size_t>(mix64(static_cast<uint64_t>(p.first) * 0x9e3779b97f4a7c15ULL ^
                                     static_cast<uint64_t>(p.second)));
  }
};

double parse_fraction(const std::string& item, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  // Digits, '.', signs and exponents only: strtod would also skip spaces and read "inf".
  const bool plain =
      !item.empty() && item.find_first_not_of("0123456789.eE+-") == std::string::npos;
  const double x = plain ? std::strtod(item.c_str(), &end) : 0;
  PARTITA_CHECK_PARAM(plain && end == item.c_str() + item.size() && errno == 0 && std::isfinite(x),
                      "edge_split", "'{}' is not a list VALID,TEST of two fractions", text);
  PARTITA_CHECK_PARAM(x > 0 && x < 1, "edge_split", "fraction {} is outside (0, 1) in '{}'", item,
                      text);
  return x;
}

// A unit's pair: s->d is an edge; when d->s is too, only s < d names the unit.
bool is_unit(const graph::Csr& g, int64_t s, int64_t d) { return s < d || !has_edge(g, d, s); }

// Visits every unit (s, d) in order of d, then s.
template <class Visit>
void for_each_unit(const graph::Csr& g, Visit visit) {
  for (int64_t d = 0; d < g.num_rows(); ++d)
    for (int64_t k = g.indptr[d]; k < g.indptr[d + 1]; ++k)
      if (is_unit(g, g.indices[k], d)) visit(g.indices[k], d);
}

int64_t held_count(double fraction, int64_t units) {
  return std::max<int64_t>(1, std::llround(fraction * static_cast<double>(units)));
}

bool connected(const graph::Csr& g, int64_t a, int64_t b) {
  return has_edge(g, a, b) || has_edge(g, b, a);
}

}  // namespace

EdgeSplitOptions parse_edge_split(const std::string& text) {
  const size_t comma = text.find(',');
  PARTITA_CHECK_PARAM(comma != std::string::npos && text.find(',', comma + 1) == std::string::npos,
                      "edge_split", "'{}' is not a list VALID,TEST of two fractions", text);
  EdgeSplitOptions o;
  o.valid_fraction = parse_fraction(text.substr(0, comma), text);
  o.test_fraction = parse_fraction(text.substr(comma + 1), text);
  PARTITA_CHECK_PARAM(o.valid_fraction + o.test_fraction < 1, "edge_split",
                      "fractions {} sum to 1 or more; no edge would be left to train on", text);
  return o;
}

bool has_edge(const graph::Csr& g, int64_t u, int64_t v) {
  const auto first = g.indices.begin() + g.indptr[v], last = g.indices.begin() + g.indptr[v + 1];
  return std::binary_search(first, last, u);
}

HeldOutEdges sample_edge_split(const graph::Csr& g, const EdgeSplitOptions& o, uint64_t seed) {
  int64_t units = 0;
  for_each_unit(g, [&](int64_t, int64_t) { ++units; });
  const int64_t valid = held_count(o.valid_fraction, units);
  const int64_t test = held_count(o.test_fraction, units);
  PARTITA_CHECK_PARAM(valid + test < units, "edge_split",
                      "holding out {} + {} of the graph's {} edges (pairs) leaves none to train on",
                      valid, test, units);
  const int64_t n = g.num_rows();
  const double non_edges =
      static_cast<double>(n) * static_cast<double>(n - 1) / 2 - static_cast<double>(units);
  PARTITA_CHECK_PARAM(static_cast<double>(valid + test) <= non_edges, "edge_split",
                      "{} negatives needed but the graph has only {} node pairs that are not edges",
                      valid + test, static_cast<int64_t>(non_edges));

  Rng rng(stream_key(seed, 0x6c696e6b /* "link" */));
  const HeldPicks picks = draw_held_units(units, valid, test, rng);
  const std::vector<int64_t>& order = picks.picks;
  const std::vector<int64_t>& role = picks.role;
  const int64_t held = valid + test;

  HeldOutEdges out;
  out.source = "sampled";
  out.fractions = o;
  int64_t index = 0;
  size_t next = 0;
  for_each_unit(g, [&](int64_t s, int64_t d) {
    std::vector<int64_t>* target = &out.train;
    if (next < order.size() && order[next] == index) {
      target = role[next] < valid ? &out.valid : &out.test;
      ++next;
    }
    target->push_back(s);
    target->push_back(d);
    ++index;
  });
  std::vector<int64_t> negatives;
  if (negatives_by_enumeration(n, units, held)) {
    negatives = draw_negatives_by_enumeration(
        n, held, rng, [&](int64_t a, int64_t b) { return connected(g, a, b); });
  } else {
    // Judged one candidate after the other, up to the first rejection (the rest of a batch
    // is drawn again after the rewind).
    std::unordered_set<Pair, PairHash> chosen;
    NegativeJudge judge;
    judge.rejected = [&](const std::vector<int64_t>& pairs) {
      std::vector<uint8_t> rejected(pairs.size() / 2, 1);
      std::unordered_set<Pair, PairHash> batch;
      for (size_t j = 0; j < rejected.size(); ++j) {
        const int64_t a = pairs[2 * j], b = pairs[2 * j + 1];
        const Pair key{std::min(a, b), std::max(a, b)};
        if (a == b || connected(g, a, b) || chosen.count(key) || !batch.insert(key).second) break;
        rejected[j] = 0;
      }
      return rejected;
    };
    judge.accepted = [&](const std::vector<int64_t>& pairs, int64_t k) {
      for (int64_t j = 0; j < k; ++j)
        chosen.insert(
            {std::min(pairs[2 * j], pairs[2 * j + 1]), std::max(pairs[2 * j], pairs[2 * j + 1])});
    };
    negatives.reserve(static_cast<size_t>(2 * held));
    draw_negatives_by_rejection(n, held, rng, judge, [&](int64_t, int64_t a, int64_t b) {
      negatives.push_back(a);
      negatives.push_back(b);
    });
  }
  out.valid_neg.assign(negatives.begin(), negatives.begin() + 2 * valid);
  out.test_neg.assign(negatives.begin() + 2 * valid, negatives.end());
  return out;
}

HeldOutEdges dataset_edge_split(const data::Dataset& ds) {
  const data::EdgeSplitArrays& split = *ds.edge_split;
  HeldOutEdges out;
  out.source = "dataset";
  out.train = split.train;
  out.valid = split.valid;
  out.test = split.test;
  out.valid_neg = split.valid_neg;
  out.test_neg = split.test_neg;
  std::unordered_set<Pair, PairHash> positives;
  for (const std::vector<int64_t>* v : {&out.valid, &out.test})
    for (size_t i = 0; i < v->size(); i += 2)
      positives.insert({std::min((*v)[i], (*v)[i + 1]), std::max((*v)[i], (*v)[i + 1])});
  const std::pair<const char*, const std::vector<int64_t>*> negatives[] = {
      {"valid_neg.npy", &out.valid_neg}, {"test_neg.npy", &out.test_neg}};
  std::unordered_set<Pair, PairHash> seen;  // negatives are unique across both files
  for (const auto& [name, v] : negatives) {
    for (size_t i = 0; i < v->size(); i += 2) {
      const int64_t a = (*v)[i], b = (*v)[i + 1];
      const Pair key{std::min(a, b), std::max(a, b)};
      PARTITA_CHECK(!connected(ds.in_edges, a, b) && !positives.count(key), FormatError,
                    "{}/{}: row {}: ({}, {}) is an edge, not a negative", ds.path, name, i / 2, a,
                    b);
      PARTITA_CHECK(seen.insert(key).second, FormatError,
                    "{}/{}: row {}: ({}, {}) repeats an earlier negative pair", ds.path, name,
                    i / 2, a, b);
    }
  }
  for (size_t i = 0; i < out.train.size(); i += 2) {
    const int64_t a = out.train[i], b = out.train[i + 1];
    PARTITA_CHECK(!positives.count({std::min(a, b), std::max(a, b)}), FormatError,
                  "{}/train_edges.npy: row {}: ({}, {}) is also a valid or test edge", ds.path,
                  i / 2, a, b);
  }
  return out;
}

graph::Csr remove_held_out(const graph::Csr& g, const HeldOutEdges& held) {
  // Both directions of every held-out pair, as (dst, src), sorted: a merge per row drops them.
  std::vector<Pair> drop;
  for (const std::vector<int64_t>* v : {&held.valid, &held.test})
    for (size_t i = 0; i < v->size(); i += 2) {
      drop.emplace_back((*v)[i + 1], (*v)[i]);
      drop.emplace_back((*v)[i], (*v)[i + 1]);
    }
  std::sort(drop.begin(), drop.end());
  graph::Csr out;
  out.indptr.assign(g.indptr.size(), 0);
  out.indices.reserve(g.indices.size());
  auto it = drop.begin();
  for (int64_t d = 0; d < g.num_rows(); ++d) {
    for (int64_t k = g.indptr[d]; k < g.indptr[d + 1]; ++k) {
      const Pair e{d, g.indices[k]};
      while (it != drop.end() && *it < e) ++it;
      if (it == drop.end() || *it != e) out.indices.push_back(g.indices[k]);
    }
    out.indptr[d + 1] = static_cast<int64_t>(out.indices.size());
  }
  return out;
}

}  // namespace partita::partition
