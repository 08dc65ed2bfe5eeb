// Epoch shuffles, batch cutting, the global batch plan, and the replicated-mode even split.
#include "partita/loader/seeds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "partita/core/error.h"

namespace partita::loader {
namespace {

std::vector<int64_t> iota_ids(int64_t n, int64_t first = 100) {
  std::vector<int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), first);
  return ids;
}

TEST(EpochSeeds, IsPermutationDeterministicAndDiffersAcrossEpochs) {
  const std::vector<int64_t> ids = iota_ids(1000);
  const std::vector<int64_t> a = epoch_seeds(ids, 7, 0);
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, ids);
  EXPECT_NE(a, ids);
  EXPECT_EQ(a, epoch_seeds(ids, 7, 0));
  EXPECT_NE(a, epoch_seeds(ids, 7, 1));
  EXPECT_NE(a, epoch_seeds(ids, 8, 0));
  EXPECT_TRUE(epoch_seeds(std::vector<int64_t>{}, 7, 0).empty());
  EXPECT_EQ(epoch_seeds(std::vector<int64_t>{5}, 7, 0), std::vector<int64_t>{5});
}

TEST(StepsPerEpoch, IsCeiling) {
  EXPECT_EQ(steps_per_epoch(0, 4), 0);
  EXPECT_EQ(steps_per_epoch(1, 4), 1);
  EXPECT_EQ(steps_per_epoch(8, 4), 2);
  EXPECT_EQ(steps_per_epoch(9, 4), 3);
  EXPECT_THROW(steps_per_epoch(9, 0), Error);
  EXPECT_THROW(steps_per_epoch(-1, 4), Error);
}

TEST(Chunk, CutsInOrderWithShortLastBatch) {
  const std::vector<int64_t> s = iota_ids(10, 0);
  const auto c = chunk(s, 4);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(c[1], (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(c[2], (std::vector<int64_t>{8, 9}));
  EXPECT_TRUE(chunk({}, 4).empty());
  EXPECT_THROW(chunk(s, 0), Error);
}

// 100 training ids with original ids 1000 + 3i, numbered by `global` (a partition's ids).
std::vector<SeedId> numbered(const std::function<int64_t(int64_t)>& global) {
  std::vector<SeedId> ids;
  for (int64_t i = 0; i < 100; ++i) ids.push_back({1000 + 3 * i, global(i)});
  return ids;
}

TEST(GlobalBatches, StepsAndExactBatchSizes) {
  const GlobalBatches plan(numbered([](int64_t i) { return i; }), 32);
  EXPECT_EQ(plan.num_ids(), 100);
  EXPECT_EQ(plan.steps(), 4);
  EXPECT_EQ(plan.batch_size(0), 32);
  EXPECT_EQ(plan.batch_size(2), 32);
  EXPECT_EQ(plan.batch_size(3), 4);
  EXPECT_THROW(plan.batch_size(4), Error);
  EXPECT_THROW(GlobalBatches(numbered([](int64_t i) { return i; }), 0), Error);
  std::vector<SeedId> twice = numbered([](int64_t i) { return i; });
  twice.push_back(twice[5]);
  EXPECT_THROW(GlobalBatches(twice, 32), Error);
}

// The same training set under two numberings (as 1 part and 2 parts renumber nodes), given
// in different orders: the batches, in original ids, are identical; split by owner, the
// ranks' shares of each step are the step's batch, partitioned, in batch order.
TEST(GlobalBatches, IndependentOfNumberingInputOrderAndOwners) {
  const auto keep_all = [](const std::vector<int64_t>& b) { return b; };
  std::vector<SeedId> one = numbered([](int64_t i) { return i; });
  // Two "parts": odd i first (ids 0..49), then even i (ids 50..99); given reversed.
  std::vector<SeedId> two = numbered([](int64_t i) { return i % 2 == 1 ? i / 2 : 50 + i / 2; });
  std::reverse(two.begin(), two.end());
  std::map<int64_t, int64_t> original_of_one, original_of_two;
  for (const SeedId& s : one) original_of_one[s.global] = s.original;
  for (const SeedId& s : two) original_of_two[s.global] = s.original;

  const GlobalBatches a(one, 32), b(two, 32);
  const auto batches_a = a.epoch_batches(7, 3, keep_all);
  ASSERT_EQ(batches_a.size(), 4u);
  std::vector<std::vector<std::vector<int64_t>>> shares;  // [rank][step]
  for (int rank = 0; rank < 2; ++rank) {
    shares.push_back(b.epoch_batches(7, 3, [rank](const std::vector<int64_t>& batch) {
      std::vector<int64_t> mine;
      for (int64_t g : batch)
        if ((g < 50) == (rank == 0)) mine.push_back(g);
      return mine;
    }));
  }
  std::set<int64_t> seen;
  for (size_t s = 0; s < batches_a.size(); ++s) {
    std::vector<int64_t> want;
    for (int64_t g : batches_a[s]) want.push_back(original_of_one[g]);
    std::vector<int64_t> got_by_rank[2];
    for (int rank = 0; rank < 2; ++rank)
      for (int64_t g : shares[rank][s]) got_by_rank[rank].push_back(original_of_two[g]);
    // Merged back in batch order, the shares are the batch.
    std::vector<int64_t> merged;
    for (int64_t o : want) {
      const bool on_0 =
          std::find(got_by_rank[0].begin(), got_by_rank[0].end(), o) != got_by_rank[0].end();
      const bool on_1 =
          std::find(got_by_rank[1].begin(), got_by_rank[1].end(), o) != got_by_rank[1].end();
      EXPECT_NE(on_0, on_1) << "original id " << o << " in step " << s;
      merged.push_back(o);
    }
    EXPECT_EQ(got_by_rank[0].size() + got_by_rank[1].size(), want.size()) << "step " << s;
    for (int rank = 0; rank < 2; ++rank) {
      std::vector<int64_t> in_order;
      for (int64_t o : want)
        if (std::find(got_by_rank[rank].begin(), got_by_rank[rank].end(), o) !=
            got_by_rank[rank].end())
          in_order.push_back(o);
      EXPECT_EQ(got_by_rank[rank], in_order) << "rank " << rank << " step " << s;
    }
    seen.insert(want.begin(), want.end());
  }
  EXPECT_EQ(seen.size(), 100u) << "every training id once per epoch";
  EXPECT_NE(a.epoch_batches(7, 4, keep_all), batches_a) << "epochs shuffle differently";
  EXPECT_EQ(a.epoch_batches(7, 3, keep_all), batches_a) << "deterministic";
}

TEST(EvenShare, SplitsContiguouslyAndCoversAll) {
  const std::vector<int64_t> ids = iota_ids(10, 0);
  std::vector<int64_t> all;
  std::vector<size_t> sizes;
  for (int r = 0; r < 3; ++r) {
    std::vector<int64_t> share = even_share(ids, r, 3);
    sizes.push_back(share.size());
    all.insert(all.end(), share.begin(), share.end());
  }
  EXPECT_EQ(all, ids);
  EXPECT_EQ(sizes, (std::vector<size_t>{4, 3, 3}));
  EXPECT_TRUE(even_share(std::vector<int64_t>{1}, 1, 2).empty());
  EXPECT_THROW(even_share(ids, 3, 3), Error);
  EXPECT_THROW(even_share(ids, 0, 0), Error);
}

}  // namespace
}  // namespace partita::loader
