// Epoch shuffles, batch cutting with wrap-around, and the replicated-mode even split.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "partita/core/error.h"
#include "partita/loader/seeds.h"

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

TEST(BatchSeeds, CutsInOrderWithShortLastBatch) {
  const std::vector<int64_t> s = iota_ids(10, 0);
  EXPECT_EQ(batch_seeds(s, 0, 4), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(batch_seeds(s, 1, 4), (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(batch_seeds(s, 2, 4), (std::vector<int64_t>{8, 9}));
  EXPECT_THROW(batch_seeds(s, -1, 4), Error);
  EXPECT_THROW(batch_seeds(s, 0, 0), Error);
  EXPECT_TRUE(batch_seeds({}, 3, 4).empty());
}

TEST(BatchSeeds, WrapsAroundPastTheEnd) {
  const std::vector<int64_t> s = iota_ids(10, 0);
  // 3 real steps; extra steps restart from the beginning, cyclically.
  EXPECT_EQ(batch_seeds(s, 3, 4), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(batch_seeds(s, 4, 4), (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(batch_seeds(s, 5, 4), (std::vector<int64_t>{8, 9, 0, 1}));
  // Fewer seeds than a batch: every seed once, never a repeat within a batch.
  const std::vector<int64_t> few{5, 6, 7};
  EXPECT_EQ(batch_seeds(few, 0, 8), few);
  for (int64_t step = 1; step < 6; ++step) {
    std::vector<int64_t> b = batch_seeds(few, step, 8);
    EXPECT_EQ(std::set<int64_t>(b.begin(), b.end()).size(), 3u) << step;
  }
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
