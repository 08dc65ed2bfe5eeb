// Link-prediction batches (loader/link_batches.h): the seeds and positions of a step, pair
// keys, negative sampling (determinism, coverage, degree weighting, independence of the
// partitioning) and the readers of a partition's training and held-out pairs, hostile files
// included.
#include "partita/loader/link_batches.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>

#include "../partition/test_datasets.h"
#include "helpers/quiet_logs.h"
#include "helpers/test_paths.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/npy.h"
#include "partita/core/parameter_error.h"
#include "partita/core/random.h"
#include "partita/partition/format.h"
#include "partita/partition/partition.h"

namespace partita::loader {
namespace {

using testing::TempDir;

ArrayView<const int64_t> view_of(const std::vector<int64_t>& v) {
  return ArrayView<const int64_t>(v);
}

// The message of the exception of type E that `f` throws ("(no exception)" otherwise).
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no exception)";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---------------------------------------------------------------------------- make_link_step

TEST(MakeLinkStep, SeedsInFirstAppearanceOrderWithSharedPositions) {
  // Pairs (5,7) (7,9) (5,5); k = 2 negatives each.
  const std::vector<int64_t> pairs = {5, 7, 7, 9, 5, 5};
  const std::vector<int64_t> negatives = {9, 11, 3, 7, 11, 5};
  const LinkStep step = make_link_step(view_of(pairs), view_of(negatives), 2);
  // Positives give 5 7 9 (in src, dst order per pair), then the negatives add 11 and 3.
  EXPECT_EQ(step.seeds, (std::vector<int64_t>{5, 7, 9, 11, 3}));
  ASSERT_EQ(step.positives.size(), 3u);
  const std::vector<std::pair<int64_t, int64_t>> want_pos = {{0, 1}, {1, 2}, {0, 0}};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(step.positives[i].src, want_pos[i].first) << i;
    EXPECT_EQ(step.positives[i].dst, want_pos[i].second) << i;
  }
  // Positive i's negatives at [2i, 2i + 2): its own source, each drawn destination.
  ASSERT_EQ(step.negatives.size(), 6u);
  const std::vector<std::pair<int64_t, int64_t>> want_neg = {{0, 2}, {0, 3}, {1, 4},
                                                             {1, 1}, {0, 3}, {0, 0}};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(step.negatives[i].src, want_neg[i].first) << i;
    EXPECT_EQ(step.negatives[i].dst, want_neg[i].second) << i;
  }
  // Every position maps back to the node it stands for.
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(step.seeds[step.positives[i].src], pairs[2 * i]);
    EXPECT_EQ(step.seeds[step.positives[i].dst], pairs[2 * i + 1]);
    for (size_t j = 0; j < 2; ++j) {
      EXPECT_EQ(step.seeds[step.negatives[2 * i + j].src], pairs[2 * i]);
      EXPECT_EQ(step.seeds[step.negatives[2 * i + j].dst], negatives[2 * i + j]);
    }
  }
  EXPECT_TRUE(step.excluded.empty());
}

TEST(MakeLinkStep, SeedsAreDistinct) {
  std::vector<int64_t> pairs, negatives;
  for (int64_t i = 0; i < 50; ++i) {
    pairs.push_back(i % 7);
    pairs.push_back((i * 3) % 11);
    for (int64_t j = 0; j < 3; ++j) negatives.push_back((i + j) % 13);
  }
  const LinkStep step = make_link_step(view_of(pairs), view_of(negatives), 3);
  std::set<int64_t> distinct(step.seeds.begin(), step.seeds.end());
  EXPECT_EQ(distinct.size(), step.seeds.size());
  std::set<int64_t> all(pairs.begin(), pairs.end());
  all.insert(negatives.begin(), negatives.end());
  EXPECT_EQ(distinct, all);
  EXPECT_EQ(step.positives.size(), 50u);
  EXPECT_EQ(step.negatives.size(), 150u);
}

TEST(MakeLinkStep, ZeroNegatives) {
  const std::vector<int64_t> pairs = {4, 2, 2, 4};
  const LinkStep step = make_link_step(view_of(pairs), view_of({}), 0);
  EXPECT_EQ(step.seeds, (std::vector<int64_t>{4, 2}));
  ASSERT_EQ(step.positives.size(), 2u);
  EXPECT_EQ(step.positives[1].src, 1);
  EXPECT_EQ(step.positives[1].dst, 0);
  EXPECT_TRUE(step.negatives.empty());
}

TEST(MakeLinkStep, EmptyBatch) {
  const LinkStep step = make_link_step(view_of({}), view_of({}), 3);
  EXPECT_TRUE(step.seeds.empty());
  EXPECT_TRUE(step.positives.empty());
  EXPECT_TRUE(step.negatives.empty());
}

TEST(MakeLinkStep, InconsistentSizesAreAnError) {
  const std::vector<int64_t> pairs = {1, 2, 3, 4};
  EXPECT_THROW(make_link_step(view_of(pairs), view_of({5, 6, 7}), 2), Error);
  EXPECT_THROW(make_link_step(view_of({1, 2, 3}), view_of({}), 0), Error);
  EXPECT_THROW(make_link_step(view_of(pairs), view_of({}), -1), Error);
}

// ---------------------------------------------------------------------------- pair_key

TEST(PairKey, ValuesAreDistinctPerOrderedPair) {
  EXPECT_EQ(pair_key(0, 0, 10), 0);
  EXPECT_EQ(pair_key(3, 7, 10), 37);
  EXPECT_EQ(pair_key(7, 3, 10), 73);
  EXPECT_EQ(pair_key(9, 9, 10), 99);
  std::set<int64_t> keys;
  for (int64_t s = 0; s < 13; ++s)
    for (int64_t d = 0; d < 13; ++d) keys.insert(pair_key(s, d, 13));
  EXPECT_EQ(keys.size(), 169u);
  EXPECT_EQ(*keys.rbegin(), 168);
}

TEST(PairKey, LargestNodeCountFitsAndOneMoreOverflows) {
  const int64_t n = 3037000499;  // floor(sqrt(2^63 - 1))
  EXPECT_EQ(pair_key(n - 1, n - 1, n), (n - 1) * n + (n - 1));
  EXPECT_GT(pair_key(n - 1, n - 1, n), 0);
  EXPECT_THROW(pair_key(0, 0, n + 1), Error);
  EXPECT_TRUE(contains(message_of<Error>([] { pair_key(0, 1, int64_t{1} << 40); }), "too many"));
  EXPECT_THROW(pair_key(0, 0, 0), Error);
}

// ---------------------------------------------------------------------------- NegativeSampler

std::vector<int64_t> identity(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<int64_t> draw(const NegativeSampler& s, uint64_t seed, uint64_t epoch, int64_t key,
                          int64_t k) {
  std::vector<int64_t> out(static_cast<size_t>(k), -1);
  s.draw(seed, epoch, key, k, out.data());
  return out;
}

TEST(NegativeSampler, DrawIsDeterministicPerSeedEpochAndKey) {
  const std::vector<int64_t> node_map = identity(1000);
  const NegativeSampler s = NegativeSampler::uniform(view_of(node_map));
  const std::vector<int64_t> a = draw(s, 3, 0, 17, 20);
  for (int64_t x : a) {
    EXPECT_GE(x, 0);
    EXPECT_LT(x, 1000);
  }
  EXPECT_EQ(a, draw(s, 3, 0, 17, 20));
  // A copy of the sampler, or a fresh one, draws the same.
  EXPECT_EQ(a, draw(NegativeSampler::uniform(view_of(node_map)), 3, 0, 17, 20));
  EXPECT_NE(a, draw(s, 3, 1, 17, 20));  // another epoch
  EXPECT_NE(a, draw(s, 3, 0, 18, 20));  // another pair
  EXPECT_NE(a, draw(s, 4, 0, 17, 20));  // another seed
  // The first draws of a longer request are the shorter request (k draws in order).
  const std::vector<int64_t> longer = draw(s, 3, 0, 17, 40);
  EXPECT_EQ(std::vector<int64_t>(longer.begin(), longer.begin() + 20), a);
  // k = 0 writes nothing.
  int64_t untouched = -7;
  s.draw(3, 0, 17, 0, &untouched);
  EXPECT_EQ(untouched, -7);
}

TEST(NegativeSampler, UniformCoversAllNodesEvenly) {
  const int64_t n = 20, keys = 2000, k = 5;
  const std::vector<int64_t> node_map = identity(n);
  const NegativeSampler s = NegativeSampler::uniform(view_of(node_map));
  std::vector<int64_t> count(static_cast<size_t>(n), 0);
  for (int64_t key = 0; key < keys; ++key)
    for (int64_t x : draw(s, 11, 2, key, k)) {
      ASSERT_GE(x, 0);
      ASSERT_LT(x, n);
      ++count[static_cast<size_t>(x)];
    }
  const double expected = static_cast<double>(keys * k) / n;
  double chi2 = 0;
  for (int64_t c : count) {
    EXPECT_GT(c, 0);
    chi2 += (c - expected) * (c - expected) / expected;
  }
  // 19 degrees of freedom: mean 19, sd ~6.2; fixed seed, so this is deterministic.
  EXPECT_LT(chi2, 60.0) << "uniform negatives far from uniform";
}

// Degrees of original id o: o % 4 (a quarter of the nodes have none).
int64_t planted_degree(int64_t original) { return original % 4; }

std::map<int64_t, int64_t> degree_counts(const NegativeSampler& s,
                                         const std::vector<int64_t>& node_map, int64_t keys,
                                         int64_t k) {
  std::map<int64_t, int64_t> count;  // by ORIGINAL id
  for (int64_t key = 0; key < keys; ++key)
    for (int64_t x : draw(s, 5, 1, key, k)) ++count[node_map[static_cast<size_t>(x)]];
  return count;
}

TEST(NegativeSampler, DegreeNegativesFollowDegreesAndSkipIsolatedNodes) {
  const int64_t n = 40, keys = 4000, k = 5;
  const std::vector<int64_t> node_map = identity(n);
  std::vector<int64_t> degrees(static_cast<size_t>(n));
  int64_t total = 0;
  for (int64_t g = 0; g < n; ++g) total += degrees[static_cast<size_t>(g)] = planted_degree(g);
  const NegativeSampler s = NegativeSampler::by_degree(view_of(node_map), degrees);
  const std::map<int64_t, int64_t> count = degree_counts(s, node_map, keys, k);
  double chi2 = 0;
  int cells = 0;
  for (int64_t o = 0; o < n; ++o) {
    const auto it = count.find(o);
    const int64_t c = it == count.end() ? 0 : it->second;
    if (planted_degree(o) == 0) {
      EXPECT_EQ(c, 0) << "node " << o << " has degree 0 but was drawn";
      continue;
    }
    const double expected = static_cast<double>(keys * k) * planted_degree(o) / total;
    chi2 += (c - expected) * (c - expected) / expected;
    ++cells;
  }
  EXPECT_EQ(cells, 30);
  // 29 degrees of freedom: mean 29, sd ~7.6. A uniform sampler would give chi2 in the
  // thousands here; fixed seed, so deterministic.
  EXPECT_LT(chi2, 80.0) << "degree negatives do not follow the degrees";
}

TEST(NegativeSampler, DrawsTheSameOriginalIdsWhateverTheNodeMap) {
  const int64_t n = 64;
  const std::vector<int64_t> map_a = identity(n);
  std::vector<int64_t> map_b(static_cast<size_t>(n));  // another permutation
  for (int64_t g = 0; g < n; ++g) map_b[static_cast<size_t>(g)] = (g * 13 + 5) % n;
  ASSERT_EQ(std::set<int64_t>(map_b.begin(), map_b.end()).size(), static_cast<size_t>(n));
  // Degrees are given per GLOBAL id: the same original degrees seen through each map.
  std::vector<int64_t> deg_a(static_cast<size_t>(n)), deg_b(static_cast<size_t>(n));
  for (int64_t g = 0; g < n; ++g) {
    deg_a[static_cast<size_t>(g)] = planted_degree(map_a[static_cast<size_t>(g)]);
    deg_b[static_cast<size_t>(g)] = planted_degree(map_b[static_cast<size_t>(g)]);
  }
  const NegativeSampler ua = NegativeSampler::uniform(view_of(map_a));
  const NegativeSampler ub = NegativeSampler::uniform(view_of(map_b));
  const NegativeSampler da = NegativeSampler::by_degree(view_of(map_a), deg_a);
  const NegativeSampler db = NegativeSampler::by_degree(view_of(map_b), deg_b);
  int differing_globals = 0;
  for (int64_t key = 0; key < 200; ++key) {
    const std::vector<int64_t> a = draw(ua, 9, 3, key, 4), b = draw(ub, 9, 3, key, 4);
    const std::vector<int64_t> c = draw(da, 9, 3, key, 4), d = draw(db, 9, 3, key, 4);
    for (size_t j = 0; j < 4; ++j) {
      EXPECT_EQ(map_a[static_cast<size_t>(a[j])], map_b[static_cast<size_t>(b[j])]);
      EXPECT_EQ(map_a[static_cast<size_t>(c[j])], map_b[static_cast<size_t>(d[j])]);
      EXPECT_NE(planted_degree(map_b[static_cast<size_t>(d[j])]), 0);
      differing_globals += a[j] != b[j];
    }
  }
  // The global ids themselves do differ (the test would be empty otherwise).
  EXPECT_GT(differing_globals, 100);
}

TEST(NegativeSampler, RefusesBadNodeMapsAndDegrees) {
  EXPECT_THROW(NegativeSampler::uniform(view_of({})), Error);
  EXPECT_THROW(NegativeSampler::uniform(view_of({0, 0, 1})), Error);  // repeated
  EXPECT_THROW(NegativeSampler::uniform(view_of({0, 3, 1})), Error);  // out of range
  EXPECT_THROW(NegativeSampler::uniform(view_of({0, -1, 1})), Error);
  const std::vector<int64_t> map = identity(3);
  EXPECT_EQ(message_of<ParameterError>([&] {
              NegativeSampler::by_degree(view_of(map), {0, 0, 0});
            }),
            "negatives_by: degree: the graph has no edges to weigh the nodes by (choose uniform)");
  EXPECT_THROW(NegativeSampler::by_degree(view_of(map), {1, -1, 2}), Error);
  EXPECT_THROW(NegativeSampler::by_degree(view_of(map), {1, 2}), Error);
  EXPECT_THROW(NegativeSampler::by_degree(view_of(map), {1, 2, 3, 4}), Error);
  // One node of nonzero degree: every draw is that node.
  const NegativeSampler one = NegativeSampler::by_degree(view_of(map), {0, 5, 0});
  for (int64_t x : draw(one, 1, 0, 42, 50)) EXPECT_EQ(x, 1);
}

// ---------------------------------------------------------------------------- readers

partition::PartitionOptions split_options(const std::string& out, int parts, double valid,
                                          double test) {
  partition::PartitionOptions o;
  o.out_dir = out;
  o.num_parts = parts;
  o.method = partition::Method::kMetis;
  o.seed = 1;
  o.threads = 2;
  o.edge_split.valid_fraction = valid;
  o.edge_split.test_fraction = test;
  return o;
}

// One 2-part partition with an edge split shared by the reader tests (made once).
class LinkEdgesReader : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    testing::PlantedOptions po;
    po.undirected = true;
    partition::partition_dataset(testing::planted_dataset(po),
                                 split_options(dir_->path(), 2, 0.05, 0.10));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string dir() { return dir_->path(); }

  // A writable copy of the partition.
  static void copy_to(const std::string& to) {
    std::filesystem::copy(dir(), to,
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::overwrite_existing);
  }

  static TempDir* dir_;
};
TempDir* LinkEdgesReader::dir_ = nullptr;

std::vector<int64_t> raw_pairs(const std::string& path) {
  return read_npy_vector<int64_t>(path, 2);
}

TEST_F(LinkEdgesReader, ReadsEachPartWithItsGlobalOffset) {
  const partition::PartitionMeta meta = partition::read_meta(dir());
  ASSERT_TRUE(meta.summary.edge_split.has_value());
  const partition::EdgeSplitStats& split = *meta.summary.edge_split;
  ASSERT_EQ(split.train_per_part.size(), 2u);
  ASSERT_GT(split.train_per_part[0], 0);
  ASSERT_GT(split.train_per_part[1], 0);
  int64_t first = 0;
  for (int p = 0; p < 2; ++p) {
    const LinkEdges e = read_link_edges(dir(), meta, p);
    EXPECT_EQ(e.total, split.train());
    EXPECT_EQ(e.first, first) << "part " << p;
    EXPECT_EQ(e.count(), split.train_per_part[static_cast<size_t>(p)]);
    EXPECT_EQ(e.pairs,
              raw_pairs(dir() + "/" + partition::part_file(p, partition::kTrainEdgesName)));
    for (int64_t i = 0; i < e.count(); ++i) {
      EXPECT_EQ(meta.owner(e.pairs[static_cast<size_t>(2 * i + 1)]), p)
          << "a part's training pair whose destination it does not own";
    }
    first += e.count();
  }
  EXPECT_EQ(first, split.train());
}

TEST_F(LinkEdgesReader, ReadAllConcatenatesThePartsInOrder) {
  const partition::PartitionMeta meta = partition::read_meta(dir());
  const LinkEdges all = read_all_link_edges(dir(), meta);
  EXPECT_EQ(all.first, 0);
  EXPECT_EQ(all.total, meta.summary.edge_split->train());
  EXPECT_EQ(all.count(), all.total);
  std::vector<int64_t> want = read_link_edges(dir(), meta, 0).pairs;
  const std::vector<int64_t> second = read_link_edges(dir(), meta, 1).pairs;
  want.insert(want.end(), second.begin(), second.end());
  EXPECT_EQ(all.pairs, want);
}

TEST_F(LinkEdgesReader, ReadsTheHeldOutPairFiles) {
  const partition::PartitionMeta meta = partition::read_meta(dir());
  const partition::EdgeSplitStats& split = *meta.summary.edge_split;
  const int64_t want[] = {split.valid, split.valid_neg, split.test, split.test_neg};
  for (int i = 0; i < 4; ++i) {
    const std::string path = dir() + "/" + partition::kEdgeSplitFiles[i];
    const std::vector<int64_t> pairs = read_pair_file(path, meta.num_nodes);
    EXPECT_EQ(static_cast<int64_t>(pairs.size()), 2 * want[i]) << path;
    EXPECT_EQ(pairs, raw_pairs(path));
  }
  // With a smaller node count, some id falls outside.
  const std::string test_pos = dir() + "/" + partition::kEdgeSplitFiles[2];
  const std::vector<int64_t> pairs = raw_pairs(test_pos);
  const int64_t largest = *std::max_element(pairs.begin(), pairs.end());
  const std::string m = message_of<FormatError>([&] { read_pair_file(test_pos, largest); });
  EXPECT_TRUE(contains(m, "test_pos.npy")) << m;
  EXPECT_TRUE(contains(m, "outside [0, " + std::to_string(largest) + ")")) << m;
}

TEST_F(LinkEdgesReader, PartOutOfRangeIsAFormatError) {
  const partition::PartitionMeta meta = partition::read_meta(dir());
  EXPECT_THROW(read_link_edges(dir(), meta, 2), FormatError);
  EXPECT_THROW(read_link_edges(dir(), meta, -1), FormatError);
}

TEST(LinkEdgesReaderNoSplit, IsAParameterErrorNamingTheTask) {
  TempDir tmp;
  testing::PlantedOptions po;
  po.num_nodes = 200;
  partition::partition_dataset(testing::planted_dataset(po), split_options(tmp.path(), 2, 0, 0));
  const partition::PartitionMeta meta = partition::read_meta(tmp.path());
  ASSERT_FALSE(meta.summary.edge_split.has_value());
  const std::string m = message_of<ParameterError>([&] { read_link_edges(tmp.path(), meta, 0); });
  EXPECT_EQ(m.rfind("task: link prediction needs an edge split", 0), 0u) << m;
  EXPECT_TRUE(contains(m, "`edge_split` VALID,TEST")) << m;
  EXPECT_THROW(read_all_link_edges(tmp.path(), meta), UsageError);
}

// Replaces part 0's train_edges.npy of a copy with `values` of `shape` (dtype T) and returns
// the FormatError message read_link_edges gives.
template <class T>
std::string corrupted_part0(const std::string& src_copy_dir, const std::vector<T>& values,
                            std::vector<int64_t> shape) {
  const std::string rel = partition::part_file(0, partition::kTrainEdgesName);
  write_npy<T>(src_copy_dir + "/" + rel, ArrayView<const T>(values), std::move(shape));
  const partition::PartitionMeta meta = partition::read_meta(src_copy_dir);
  return message_of<FormatError>([&] { read_link_edges(src_copy_dir, meta, 0); });
}

TEST_F(LinkEdgesReader, HostileTrainEdgeFilesAreFormatErrorsNamingTheFile) {
  TempDir tmp;
  const std::string copy = tmp / "p";
  copy_to(copy);
  const partition::PartitionMeta meta = partition::read_meta(copy);
  const int64_t count = meta.summary.edge_split->train_per_part[0];
  const std::string rel = partition::part_file(0, partition::kTrainEdgesName);
  std::vector<int64_t> good = raw_pairs(copy + "/" + rel);
  ASSERT_EQ(static_cast<int64_t>(good.size()), 2 * count);

  // Wrong shape: [k, 3].
  std::vector<int64_t> three(static_cast<size_t>(3 * count), 0);
  std::string m = corrupted_part0<int64_t>(copy, three, {count, 3});
  EXPECT_TRUE(contains(m, "train_edges.npy")) << m;
  EXPECT_TRUE(contains(m, "[k, 2]")) << m;

  // Wrong number of dimensions: flat.
  m = corrupted_part0<int64_t>(copy, good, {2 * count});
  EXPECT_TRUE(contains(m, "train_edges.npy")) << m;

  // Wrong dtype: int32.
  std::vector<int32_t> narrow(good.begin(), good.end());
  m = corrupted_part0<int32_t>(copy, narrow, {count, 2});
  EXPECT_TRUE(contains(m, "train_edges.npy")) << m;
  EXPECT_TRUE(contains(m, "int64")) << m;

  // Row count other than partita.json's.
  std::vector<int64_t> shorter(good.begin(), good.end() - 2);
  m = corrupted_part0<int64_t>(copy, shorter, {count - 1, 2});
  EXPECT_TRUE(contains(m, "train_edges.npy")) << m;
  EXPECT_TRUE(contains(
      m, std::to_string(count - 1) + " pairs, but partita.json says " + std::to_string(count)))
      << m;

  // An id out of range, then a negative one.
  std::vector<int64_t> bad = good;
  bad[3] = meta.num_nodes;
  m = corrupted_part0<int64_t>(copy, bad, {count, 2});
  EXPECT_TRUE(contains(m, "train_edges.npy")) << m;
  EXPECT_TRUE(contains(m, "row 1 holds node " + std::to_string(meta.num_nodes))) << m;
  bad = good;
  bad[0] = -1;
  m = corrupted_part0<int64_t>(copy, bad, {count, 2});
  EXPECT_TRUE(contains(m, "row 0 holds node -1")) << m;

  // Restored, it reads again; part 1 was never touched.
  write_npy<int64_t>(copy + "/" + rel, ArrayView<const int64_t>(good), {count, 2});
  EXPECT_EQ(read_link_edges(copy, meta, 0).pairs, good);
  EXPECT_EQ(read_link_edges(copy, meta, 1).count(), meta.summary.edge_split->train_per_part[1]);
}

TEST_F(LinkEdgesReader, MissingOrTruncatedFilesAreErrors) {
  TempDir tmp;
  const std::string copy = tmp / "p";
  copy_to(copy);
  const partition::PartitionMeta meta = partition::read_meta(copy);
  const std::string path = copy + "/" + partition::part_file(1, partition::kTrainEdgesName);
  const std::string bytes = testing::read_file(path);
  testing::write_file(path, bytes.substr(0, bytes.size() / 2));
  std::string m = message_of<Error>([&] { read_link_edges(copy, meta, 1); });
  EXPECT_TRUE(contains(m, "train_edges.npy")) << m;
  EXPECT_THROW(read_all_link_edges(copy, meta), Error);
  std::filesystem::remove(path);
  m = message_of<Error>([&] { read_link_edges(copy, meta, 1); });
  EXPECT_TRUE(contains(m, "train_edges.npy")) << m;
  const std::string test_pos = copy + "/" + partition::kEdgeSplitFiles[2];
  std::filesystem::remove(test_pos);
  m = message_of<Error>([&] { read_pair_file(test_pos, meta.num_nodes); });
  EXPECT_TRUE(contains(m, "test_pos.npy")) << m;
}

}  // namespace
}  // namespace partita::loader

namespace partita::loader {
namespace {

// Temporal steps: a seed is a (node, time) pair; the same node at two times is two seeds, at
// one time one, and the negatives take their positive's time.
TEST(MakeLinkStep, TimedSeedsArePairsOfNodeAndTime) {
  const std::vector<int64_t> pairs{1, 2, 1, 3, 2, 1};
  const std::vector<int64_t> negs{3, 4, 2};
  const std::vector<int64_t> times{5, 5, 7};
  const LinkStep s = make_link_step(view_of(pairs), view_of(negs), 1, view_of(times));
  EXPECT_EQ(s.seeds, (std::vector<int64_t>{1, 2, 3, 2, 1, 4}));
  EXPECT_EQ(s.seed_times, (std::vector<int64_t>{5, 5, 5, 7, 7, 5}));
  ASSERT_EQ(s.positives.size(), 3u);
  EXPECT_EQ(s.positives[2].src, 3);  // (2, 7)
  EXPECT_EQ(s.positives[2].dst, 4);  // (1, 7)
  ASSERT_EQ(s.negatives.size(), 3u);
  EXPECT_EQ(s.negatives[0].dst, 2);  // (3, 5): a seed already
  EXPECT_EQ(s.negatives[1].dst, 5);  // (4, 5)
  EXPECT_EQ(s.negatives[2].src, 3);
  EXPECT_EQ(s.negatives[2].dst, 3);  // (2, 7)
  EXPECT_TRUE(make_link_step(view_of(pairs), view_of(negs), 1).seed_times.empty());
  EXPECT_THROW(make_link_step(view_of(pairs), view_of(negs), 1, view_of(negs).subview(0, 2)),
               Error);
}

TEST(TimePairKeys, PositionsOfTheTriplesAndRepeatsRefused) {
  EXPECT_EQ(time_pair_keys({4, 1, 0, 2, 4, 1}, {9, 3, 2}), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_THROW(time_pair_keys({4, 1, 4, 1}, {3, 3}), Error);
  EXPECT_THROW(time_pair_keys({4, 1}, {3, 3}), Error);
}

// Brute force: no negative drawn for a pair (u, v) at time t is joined to u by a training
// pair, either way, no later than t; draws that reject nothing are the plain draws; a
// source joined to every node at its time is an error.
TEST(NegativeSampler, TemporalNegativesAreNotJoinedAtTheirTime) {
  const int64_t n = 12;
  std::vector<int64_t> node_map(static_cast<size_t>(n));
  std::iota(node_map.begin(), node_map.end(), 0);
  std::reverse(node_map.begin(), node_map.end());
  const NegativeSampler sampler = NegativeSampler::uniform(view_of(node_map));
  // A dense set of timed training pairs: most (u, w) are joined at some time.
  std::vector<int64_t> pairs, times;
  Rng rng(stream_key(3, 1));
  for (int64_t i = 0; i < 120; ++i) {
    pairs.push_back(static_cast<int64_t>(rng.below(n)));
    pairs.push_back(static_cast<int64_t>(rng.below(n)));
    times.push_back(static_cast<int64_t>(rng.below(100)));
  }
  const JoinedPairs joined(view_of(pairs), view_of(times));
  const auto brute_joined = [&](int64_t u, int64_t w, int64_t t) {
    for (size_t i = 0; i < times.size(); ++i)
      if (times[i] <= t && ((pairs[2 * i] == u && pairs[2 * i + 1] == w) ||
                            (pairs[2 * i] == w && pairs[2 * i + 1] == u)))
        return true;
    return false;
  };
  int64_t drawn = 0, redrawn = 0;
  for (size_t i = 0; i < times.size(); ++i) {
    const int64_t u = pairs[2 * i], t = times[i];
    std::vector<int64_t> plain(6), timed(6);
    sampler.draw(7, 2, static_cast<int64_t>(i), 6, plain.data());
    sampler.draw(7, 2, static_cast<int64_t>(i), 6, timed.data(),
                 [&](int64_t w) { return joined.joined(u, w, t); });
    for (int64_t w : timed) {
      EXPECT_FALSE(brute_joined(u, w, t)) << u << " -> " << w << " at " << t;
      ++drawn;
    }
    for (int64_t w : plain) redrawn += brute_joined(u, w, t) ? 1 : 0;
    std::vector<int64_t> again(6);
    sampler.draw(7, 2, static_cast<int64_t>(i), 6, again.data(), [](int64_t) { return false; });
    EXPECT_EQ(again, plain);
  }
  EXPECT_GT(redrawn, 0) << "the rule never rejected a plain draw: vacuous";
  EXPECT_EQ(drawn, 6 * static_cast<int64_t>(times.size()));
  std::vector<int64_t> out(1);
  EXPECT_THROW(sampler.draw(7, 2, 0, 1, out.data(), [](int64_t) { return true; }), Error);
  // Rejecting all but one node finds it (by redraws, then by the scan).
  sampler.draw(7, 2, 0, 1, out.data(), [](int64_t w) { return w != 5; });
  EXPECT_EQ(out[0], 5);
}

}  // namespace
}  // namespace partita::loader
