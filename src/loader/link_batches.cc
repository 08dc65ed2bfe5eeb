// Link-prediction batches: see partita/loader/link_batches.h.
#include "partita/loader/link_batches.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "partita/core/error.h"
#include "partita/core/npy.h"
#include "partita/core/parameter_error.h"
#include "partita/core/random.h"

namespace partita::loader {
namespace {

// Keeps the negatives' streams apart from shuffles and sampling keyed by the same values.
constexpr uint64_t kNegativeStream = 0x6e656761746976ULL;

const partition::EdgeSplitStats& edge_split_of(const std::string& dir,
                                               const partition::PartitionMeta& meta) {
  PARTITA_CHECK_PARAM(meta.summary.edge_split.has_value(), "task",
                      "link prediction needs an edge split, and {} has none; partition the "
                      "dataset with `edge_split` VALID,TEST (e.g. 0.05,0.10), or give the "
                      "dataset its own train/valid/test edge files",
                      dir);
  return *meta.summary.edge_split;
}

// The pairs of `path` checked against `rows` (-1: any) and the node count.
std::vector<int64_t> read_pairs(const std::string& path, int64_t rows, int64_t num_nodes) {
  NpyArray array = NpyArray::open(path);
  array.expect(DType::kInt64, 2);
  PARTITA_CHECK(array.dim(1) == 2, FormatError, "{}: expected shape [k, 2], found [{}, {}]", path,
                array.dim(0), array.dim(1));
  PARTITA_CHECK(rows < 0 || array.dim(0) == rows, FormatError,
                "{}: {} pairs, but partita.json says {}", path, array.dim(0), rows);
  const ArrayView<const int64_t> v = array.view<int64_t>();
  for (int64_t i = 0; i < v.size(); ++i) {
    PARTITA_CHECK(v[i] >= 0 && v[i] < num_nodes, FormatError,
                  "{}: row {} holds node {}, outside [0, {})", path, i / 2, v[i], num_nodes);
  }
  return std::vector<int64_t>(v.begin(), v.end());
}

}  // namespace

LinkEdges read_link_edges(const std::string& dir, const partition::PartitionMeta& meta, int part) {
  const partition::EdgeSplitStats& split = edge_split_of(dir, meta);
  PARTITA_CHECK(part >= 0 && static_cast<size_t>(part) < split.train_per_part.size(), FormatError,
                "{}/partita.json: edge_split has no training count for part {}", dir, part);
  LinkEdges edges;
  edges.total = split.train();
  for (int p = 0; p < part; ++p) edges.first += split.train_per_part[static_cast<size_t>(p)];
  edges.pairs = read_pairs(dir + "/" + partition::part_file(part, partition::kTrainEdgesName),
                           split.train_per_part[static_cast<size_t>(part)], meta.num_nodes);
  if (split.by_time)
    edges.times =
        read_time_file(dir + "/" + partition::part_file(part, partition::kTrainEdgeTimeName),
                       split.train_per_part[static_cast<size_t>(part)]);
  return edges;
}

LinkEdges read_all_link_edges(const std::string& dir, const partition::PartitionMeta& meta) {
  LinkEdges all;
  all.total = edge_split_of(dir, meta).train();
  for (int p = 0; p < meta.num_parts; ++p) {
    const LinkEdges part = read_link_edges(dir, meta, p);
    all.pairs.insert(all.pairs.end(), part.pairs.begin(), part.pairs.end());
    all.times.insert(all.times.end(), part.times.begin(), part.times.end());
  }
  return all;
}

std::vector<int64_t> read_pair_file(const std::string& path, int64_t num_nodes) {
  return read_pairs(path, -1, num_nodes);
}

std::vector<int64_t> read_time_file(const std::string& path, int64_t rows) {
  NpyArray array = NpyArray::open(path);
  array.expect(DType::kInt64, 1);
  PARTITA_CHECK(array.dim(0) == rows, FormatError, "{}: {} times for {} pairs", path, array.dim(0),
                rows);
  const ArrayView<const int64_t> v = array.view<int64_t>();
  return std::vector<int64_t>(v.begin(), v.end());
}

std::vector<int64_t> time_pair_keys(const std::vector<int64_t>& original_pairs,
                                    const std::vector<int64_t>& times) {
  const size_t n = times.size();
  PARTITA_CHECK(original_pairs.size() == 2 * n, Error, "internal: {} pair ids for {} times",
                original_pairs.size(), n);
  const auto triple = [&](size_t i) {
    return std::tuple(original_pairs[2 * i], original_pairs[2 * i + 1], times[i]);
  };
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return triple(a) < triple(b); });
  std::vector<int64_t> keys(n);
  for (size_t j = 0; j < n; ++j) {
    PARTITA_CHECK(j == 0 || triple(order[j - 1]) < triple(order[j]), Error,
                  "link prediction: pair ({}, {}) at time {} is listed twice",
                  std::get<0>(triple(order[j])), std::get<1>(triple(order[j])),
                  std::get<2>(triple(order[j])));
    keys[order[j]] = static_cast<int64_t>(j);
  }
  return keys;
}

int64_t pair_key(int64_t original_src, int64_t original_dst, int64_t num_nodes) {
  // floor(sqrt(2^63 - 1)): num_nodes^2 - 1 must fit.
  PARTITA_CHECK(num_nodes >= 1 && num_nodes <= 3037000499, Error,
                "link prediction: {} nodes are too many to key their pairs", num_nodes);
  return original_src * num_nodes + original_dst;
}

NegativeSampler NegativeSampler::uniform(ArrayView<const int64_t> node_map) {
  const int64_t n = node_map.size();
  PARTITA_CHECK(n >= 1, Error, "negative sampling: the graph has no nodes");
  NegativeSampler s;
  s.global_of_.assign(static_cast<size_t>(n), -1);
  for (int64_t gid = 0; gid < n; ++gid) {
    const int64_t original = node_map[gid];
    PARTITA_CHECK(original >= 0 && original < n && s.global_of_[static_cast<size_t>(original)] < 0,
                  Error, "negative sampling: node_map is not a permutation (global id {} -> {})",
                  gid, original);
    s.global_of_[static_cast<size_t>(original)] = gid;
  }
  return s;
}

NegativeSampler NegativeSampler::by_degree(ArrayView<const int64_t> node_map,
                                           const std::vector<int64_t>& degrees) {
  NegativeSampler s = uniform(node_map);
  PARTITA_CHECK(static_cast<int64_t>(degrees.size()) == node_map.size(), Error,
                "negative sampling: {} degrees for {} nodes", degrees.size(), node_map.size());
  s.cumulative_.resize(degrees.size());
  int64_t sum = 0;
  for (size_t original = 0; original < degrees.size(); ++original) {
    const int64_t degree = degrees[static_cast<size_t>(s.global_of_[original])];
    PARTITA_CHECK(degree >= 0, Error, "negative sampling: node {} has degree {}", original, degree);
    sum += degree;
    s.cumulative_[original] = sum;
  }
  PARTITA_CHECK_PARAM(sum > 0, "negatives_by",
                      "degree: the graph has no edges to weigh the nodes by (choose uniform)");
  return s;
}

int64_t NegativeSampler::draw_original(Rng& rng) const {
  if (cumulative_.empty()) return static_cast<int64_t>(rng.below(global_of_.size()));
  // The first node whose cumulative degree exceeds x: each node with probability
  // degree / total.
  const auto x = static_cast<int64_t>(rng.below(static_cast<uint64_t>(cumulative_.back())));
  return std::upper_bound(cumulative_.begin(), cumulative_.end(), x) - cumulative_.begin();
}

void NegativeSampler::draw(uint64_t seed, uint64_t epoch, int64_t key, int64_t k,
                           int64_t* out) const {
  Rng rng(stream_key(seed, epoch, static_cast<uint64_t>(key), kNegativeStream));
  for (int64_t j = 0; j < k; ++j) out[j] = global_of_[static_cast<size_t>(draw_original(rng))];
}

void NegativeSampler::draw(uint64_t seed, uint64_t epoch, int64_t key, int64_t k, int64_t* out,
                           const std::function<bool(int64_t)>& rejected) const {
  Rng rng(stream_key(seed, epoch, static_cast<uint64_t>(key), kNegativeStream));
  const int64_t n = static_cast<int64_t>(global_of_.size());
  for (int64_t j = 0; j < k; ++j) {
    int64_t original = draw_original(rng);
    for (int tries = 1;
         tries < kMaxNegativeDraws && rejected(global_of_[static_cast<size_t>(original)]); ++tries)
      original = draw_original(rng);
    for (int64_t step = 0; step <= n && rejected(global_of_[static_cast<size_t>(original)]);
         ++step) {
      PARTITA_CHECK(step < n, Error,
                    "link prediction: no node is a negative for the pair of key {} at its time",
                    key);
      original = (original + 1) % n;
    }
    out[j] = global_of_[static_cast<size_t>(original)];
  }
}

JoinedPairs::JoinedPairs(ArrayView<const int64_t> pairs, ArrayView<const int64_t> times) {
  PARTITA_CHECK(pairs.size() == 2 * times.size(), Error, "internal: {} pair ids for {} times",
                pairs.size(), times.size());
  earliest_.reserve(static_cast<size_t>(times.size()));
  for (int64_t i = 0; i < times.size(); ++i) {
    const int64_t a = pairs[2 * i], b = pairs[2 * i + 1];
    auto [it, inserted] = earliest_.try_emplace({std::min(a, b), std::max(a, b)}, times[i]);
    if (!inserted) it->second = std::min(it->second, times[i]);
  }
}

bool JoinedPairs::joined(int64_t u, int64_t w, int64_t t) const {
  const auto it = earliest_.find({std::min(u, w), std::max(u, w)});
  return it != earliest_.end() && it->second <= t;
}

LinkStep make_link_step(ArrayView<const int64_t> pairs, ArrayView<const int64_t> negative_dsts,
                        int64_t k, ArrayView<const int64_t> times) {
  const int64_t b = pairs.size() / 2;
  PARTITA_CHECK(pairs.size() % 2 == 0 && k >= 0 && negative_dsts.size() == b * k, Error,
                "internal: {} pair ids with {} negatives for k = {}", pairs.size(),
                negative_dsts.size(), k);
  const bool timed = !times.empty();
  PARTITA_CHECK(!timed || times.size() == b, Error, "internal: {} times for {} pairs", times.size(),
                b);
  LinkStep step;
  // (node, time): the time is 0 for every seed of an untimed step.
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> position;
  position.reserve(static_cast<size_t>(b * (2 + k)));
  const auto seed_of = [&](int64_t node, int64_t i) {
    const int64_t t = timed ? times[i] : 0;
    auto [it, inserted] = position.try_emplace({node, t}, static_cast<int64_t>(step.seeds.size()));
    if (inserted) {
      step.seeds.push_back(node);
      if (timed) step.seed_times.push_back(t);
    }
    return it->second;
  };
  step.positives.reserve(static_cast<size_t>(b));
  for (int64_t i = 0; i < b; ++i)
    step.positives.push_back({seed_of(pairs[2 * i], i), seed_of(pairs[2 * i + 1], i)});
  step.negatives.reserve(static_cast<size_t>(b * k));
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = 0; j < k; ++j)
      step.negatives.push_back(
          {step.positives[static_cast<size_t>(i)].src, seed_of(negative_dsts[i * k + j], i)});
  }
  return step;
}

}  // namespace partita::loader
