// InProcessCollectiveGroup: the Collectives contract with threads as ranks (the MPI backend
// is checked by comm_mpi_test under mpirun).
#include "partita/comm/inproc_collectives.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "partita/comm/errors.h"
#include "partita/comm/wire_version.h"

namespace partita {
namespace {

// Runs body(rank, collectives) on `n` threads; returns each thread's failure text ("" if ok).
std::vector<std::string> run_ranks(InProcessCollectiveGroup& group,
                                   const std::function<void(int, Collectives&)>& body) {
  std::vector<std::string> failures(static_cast<size_t>(group.size()));
  std::vector<std::thread> threads;
  for (int r = 0; r < group.size(); ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r, group.member(r));
      } catch (const std::exception& e) {
        failures[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return failures;
}

class InProcessCollectivesTest : public ::testing::TestWithParam<int> {};

TEST_P(InProcessCollectivesTest, ReduceBroadcastGather) {
  const int n = GetParam();
  InProcessCollectiveGroup group(n, 20);
  std::vector<std::vector<int64_t>> ints(n), gathered(n), bcast(n);
  std::vector<std::vector<float>> buckets(n);
  std::vector<double> maxes(n), mins(n);
  const auto failures = run_ranks(group, [&](int r, Collectives& c) {
    ASSERT_EQ(c.rank(), r);
    ASSERT_EQ(c.size(), n);
    for (int round = 0; round < 50; ++round) c.barrier();  // back-to-back operations
    ints[r] = {r, 1, int64_t{r} * r};
    c.allreduce_sum(ints[r]);
    maxes[r] = c.allreduce_one(0.5 * r, ReduceOp::kMax);
    mins[r] = c.allreduce_one(0.5 * r + 3, ReduceOp::kMin);
    buckets[r].assign(100, static_cast<float>(r));
    c.allreduce_bucketed(buckets[r].data(), buckets[r].size(), 7);
    bcast[r] = {r, -r};
    c.broadcast(bcast[r].data(), bcast[r].size(), n - 1);
    std::vector<int64_t> mine(static_cast<size_t>(r), r);
    gathered[r] = c.allgather(mine);
  });
  int64_t sum_r = 0, sum_r2 = 0;
  std::vector<int64_t> want_gather;
  for (int q = 0; q < n; ++q) {
    sum_r += q;
    sum_r2 += int64_t{q} * q;
    want_gather.insert(want_gather.end(), static_cast<size_t>(q), q);
  }
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(failures[r], "") << "rank " << r;
    EXPECT_EQ(ints[r], (std::vector<int64_t>{sum_r, n, sum_r2}));
    EXPECT_EQ(maxes[r], 0.5 * (n - 1));
    EXPECT_EQ(mins[r], 3.0);
    EXPECT_EQ(buckets[r], std::vector<float>(100, static_cast<float>(sum_r)));
    EXPECT_EQ(bcast[r], (std::vector<int64_t>{n - 1, 1 - n}));
    EXPECT_EQ(gathered[r], want_gather);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, InProcessCollectivesTest, ::testing::Values(1, 2, 4));

TEST(InProcessCollectives, FloatSumsAreTheSameBitsOnEveryRank) {
  InProcessCollectiveGroup group(3, 20);
  std::vector<float> out(3);
  run_ranks(group, [&](int r, Collectives& c) {
    float v[1] = {r == 0 ? 1e8f : r == 1 ? 1.0f : -1e8f};
    c.allreduce(v, 1);
    out[r] = v[0];
  });
  EXPECT_EQ(out[0], out[1]);
  EXPECT_EQ(out[1], out[2]);
}

TEST(InProcessCollectives, MissingRankTimesOutWithDiagnosisAndBreaksTheGroup) {
  InProcessCollectiveGroup group(2, 0.2);
  std::string what;
  Collectives& c = group.member(0);
  c.set_timeout_diagnosis([] { return std::string("rank 1 is late on purpose"); });
  try {
    c.barrier();
  } catch (const TimeoutError& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("not every rank of 2 joined within 0.2 s; rank 1 is late on purpose"),
            std::string::npos)
      << what;
  EXPECT_THROW(group.member(1).barrier(), CommError);
  EXPECT_THROW(c.barrier(), CommError);
}

TEST(InProcessCollectives, MismatchedCountsAreAnError) {
  InProcessCollectiveGroup group(2, 20);
  const auto failures = run_ranks(group, [](int r, Collectives& c) {
    std::vector<int64_t> v(static_cast<size_t>(r + 1), 1);
    c.allreduce_sum(v);
  });
  EXPECT_NE(failures[0].find("different counts"), std::string::npos) << failures[0];
  EXPECT_NE(failures[1].find("different counts"), std::string::npos) << failures[1];
}

TEST(InProcessCollectives, BadRankIsRefused) {
  InProcessCollectiveGroup group(2);
  EXPECT_THROW(group.member(2), CommError);
  EXPECT_THROW(InProcessCollectiveGroup(0), CommError);
}

TEST(WireVersion, SameBuildsAgreeAndAMixedJobFailsOnEveryRankNamingBoth) {
  InProcessCollectiveGroup group(3, 20);
  EXPECT_EQ(run_ranks(group, [](int, Collectives& c) { check_wire_versions(c); }),
            std::vector<std::string>(3, ""));
  const auto failures =
      run_ranks(group, [](int r, Collectives& c) { check_wire_versions(c, r == 2 ? 7 : 1); });
  for (const std::string& what : failures)
    EXPECT_NE(what.find("rank 2 speaks wire version 7 and rank 0 version 1"), std::string::npos)
        << what;
}

}  // namespace
}  // namespace partita
