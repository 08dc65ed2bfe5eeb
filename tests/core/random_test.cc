#include "partita/core/random.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <vector>

#include "partita/core/error.h"
#include "partita/core/parallel.h"

namespace partita {
namespace {

TEST(Random, StreamsAreReproducibleAndDistinct) {
  Rng a(stream_key(7, 1, 2)), b(stream_key(7, 1, 2)), c(stream_key(7, 2, 1));
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
}

TEST(Random, BelowIsInRangeAndRoughlyUniform) {
  Rng r(stream_key(1));
  std::vector<int> counts(10, 0);
  for (int i = 0; i < 100000; ++i) {
    uint64_t v = r.below(10);
    ASSERT_LT(v, 10u);
    ++counts[v];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);  // > 5 sigma
}

TEST(Parallel, CoversRangeOnceForAnyThreadCount) {
  for (int threads : {1, 2, 5}) {
    std::vector<std::atomic<int>> hits(1003);
    parallel_chunks(0, 1003, 17, threads, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

TEST(Parallel, RethrowsWorkerError) {
  EXPECT_THROW(parallel_chunks(0, 100, 1, 2,
                               [](int64_t b, int64_t) {
                                 if (b == 50) throw FormatError("x: bad");
                               }),
               FormatError);
}

}  // namespace
}  // namespace partita
