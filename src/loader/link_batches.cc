// Link-prediction batches: see partita/loader/link_batches.h.
#include "partita/loader/link_batches.h"

#include <algorithm>
#include <numeric>

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
  return edges;
}

LinkEdges read_all_link_edges(const std::string& dir, const partition::PartitionMeta& meta) {
  LinkEdges all;
  all.total = edge_split_of(dir, meta).train();
  for (int p = 0; p < meta.num_parts; ++p) {
    const LinkEdges part = read_link_edges(dir, meta, p);
    all.pairs.insert(all.pairs.end(), part.pairs.begin(), part.pairs.end());
  }
  return all;
}

std::vector<int64_t> read_pair_file(const std::string& path, int64_t num_nodes) {
  return read_pairs(path, -1, num_nodes);
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

void NegativeSampler::draw(uint64_t seed, uint64_t epoch, int64_t key, int64_t k,
                           int64_t* out) const {
  Rng rng(stream_key(seed, epoch, static_cast<uint64_t>(key), kNegativeStream));
  for (int64_t j = 0; j < k; ++j) {
    int64_t original = 0;
    if (cumulative_.empty()) {
      original = static_cast<int64_t>(rng.below(global_of_.size()));
    } else {
      // The first node whose cumulative degree exceeds x: each node with probability
      // degree / total.
      const auto x = static_cast<int64_t>(rng.below(static_cast<uint64_t>(cumulative_.back())));
      original = std::upper_bound(cumulative_.begin(), cumulative_.end(), x) - cumulative_.begin();
    }
    out[j] = global_of_[static_cast<size_t>(original)];
  }
}

LinkStep make_link_step(ArrayView<const int64_t> pairs, ArrayView<const int64_t> negative_dsts,
                        int64_t k) {
  const int64_t b = pairs.size() / 2;
  PARTITA_CHECK(pairs.size() % 2 == 0 && k >= 0 && negative_dsts.size() == b * k, Error,
                "internal: {} pair ids with {} negatives for k = {}", pairs.size(),
                negative_dsts.size(), k);
  LinkStep step;
  absl::flat_hash_map<int64_t, int64_t> position;
  position.reserve(static_cast<size_t>(b * (2 + k)));
  const auto seed_of = [&](int64_t node) {
    auto [it, inserted] = position.try_emplace(node, static_cast<int64_t>(step.seeds.size()));
    if (inserted) step.seeds.push_back(node);
    return it->second;
  };
  step.positives.reserve(static_cast<size_t>(b));
  for (int64_t i = 0; i < b; ++i)
    step.positives.push_back({seed_of(pairs[2 * i]), seed_of(pairs[2 * i + 1])});
  step.negatives.reserve(static_cast<size_t>(b * k));
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = 0; j < k; ++j)
      step.negatives.push_back(
          {step.positives[static_cast<size_t>(i)].src, seed_of(negative_dsts[i * k + j])});
  }
  return step;
}

}  // namespace partita::loader
