// ThreadPool and the parallel_chunks built on it: results in order, exceptions reaching the
// waiter, many small tasks, destruction with queued work, and no threads started per call.
#include "partita/core/thread_pool.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <numeric>
#include <set>
#include <stdexcept>
#include <vector>

#include "partita/core/parallel.h"

namespace partita {
namespace {

TEST(ThreadPool, FuturesReturnEachTasksResult) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.size(), 3);
  std::vector<std::future<int>> results;
  for (int i = 0; i < 200; ++i) results.push_back(pool.submit([i] { return i * i; }));
  for (int i = 0; i < 200; ++i) EXPECT_EQ(results[static_cast<size_t>(i)].get(), i * i);
}

TEST(ThreadPool, OneWorkerStartsTasksInSubmissionOrder) {
  ThreadPool pool(1);
  std::vector<int> order;  // touched by the single worker only
  std::vector<std::future<void>> done;
  for (int i = 0; i < 100; ++i) done.push_back(pool.submit([&order, i] { order.push_back(i); }));
  for (auto& f : done) f.get();
  std::vector<int> want(100);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(order, want);
}

TEST(ThreadPool, ExceptionsReachTheWaiterAndTheWorkerSurvives) {
  ThreadPool pool(2);
  auto bad = pool.submit([]() -> int { throw std::runtime_error("task failed"); });
  try {
    bad.get();
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task failed");
  }
  EXPECT_EQ(pool.submit([] { return 7; }).get(), 7);
}

TEST(ThreadPool, ManySmallTasks) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  std::vector<std::future<void>> done;
  for (int i = 1; i <= 20000; ++i) done.push_back(pool.submit([&sum, i] { sum += i; }));
  for (auto& f : done) f.get();
  EXPECT_EQ(sum.load(), int64_t{20000} * 20001 / 2);
}

TEST(ThreadPool, DestructorRunsQueuedTasksThenJoins) {
  std::atomic<int> ran{0};
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::vector<std::future<void>> done;
  {
    ThreadPool pool(1);
    done.push_back(pool.submit([gate] { gate.wait(); }));  // holds the only worker
    for (int i = 0; i < 50; ++i) done.push_back(pool.submit([&ran] { ++ran; }));
    EXPECT_EQ(ran.load(), 0);
    release.set_value();
  }  // the 50 queued tasks still run
  EXPECT_EQ(ran.load(), 50);
  for (auto& f : done) EXPECT_NO_THROW(f.get());  // no broken promise
}

TEST(ThreadPool, NoWorkersRunsInlineAndReserveGrows) {
  ThreadPool pool;
  EXPECT_EQ(pool.size(), 0);
  const auto caller = std::this_thread::get_id();
  EXPECT_EQ(pool.submit([] { return std::this_thread::get_id(); }).get(), caller);
  pool.reserve(2);
  pool.reserve(1);  // never shrinks
  EXPECT_EQ(pool.size(), 2);
  EXPECT_NE(pool.submit([] { return std::this_thread::get_id(); }).get(), caller);
}

TEST(ThreadPool, TasksMaySubmitTasks) {
  ThreadPool pool(2);
  auto outer = pool.submit([&pool] { return pool.submit([] { return 5; }); });
  EXPECT_EQ(outer.get().get(), 5);
}

// Chunk c writes c-derived values: the result is the same for every thread count.
std::vector<int64_t> chunked_values(int threads) {
  std::vector<int64_t> out(10007);
  parallel_chunks(0, 10007, 97, threads, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[static_cast<size_t>(i)] = i * 31 + b;
  });
  return out;
}

TEST(ParallelChunks, SameResultsForAnyThreadCount) {
  const std::vector<int64_t> one = chunked_values(1);
  EXPECT_EQ(one[100], 100 * 31 + 97);
  for (int threads : {2, 3, 8}) EXPECT_EQ(chunked_values(threads), one) << threads;
}

TEST(ParallelChunks, FirstExceptionRethrownAfterAllChunksStop) {
  std::atomic<int> running{0};
  try {
    parallel_chunks(0, 1000, 1, 4, [&](int64_t b, int64_t) {
      ++running;
      if (b == 10) throw std::runtime_error("chunk 10");
      --running;
    });
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "chunk 10");
  }
  EXPECT_EQ(running.load(), 1);  // only the failed chunk never decremented: none still runs
}

TEST(ParallelChunks, NestedCallsComplete) {
  std::atomic<int64_t> sum{0};
  parallel_chunks(0, 16, 1, 4, [&](int64_t, int64_t) {
    parallel_chunks(0, 100, 7, 4, [&](int64_t b, int64_t e) { sum += e - b; });
  });
  EXPECT_EQ(sum.load(), 1600);
}

// Calls reuse the pool's workers: the threads that ran chunks over many calls are the caller
// and at most the pool's workers (spawning threads per call gave new thread ids every call).
TEST(ParallelChunks, CallsReuseTheSameThreads) {
  std::mutex mutex;
  std::set<long> tids;
  for (int call = 0; call < 30; ++call) {
    parallel_chunks(0, 64, 1, 4, [&](int64_t, int64_t) {
      volatile double x = 0;
      for (int i = 0; i < 20000; ++i) x = x + i;  // some work, so helpers take chunks
      std::lock_guard<std::mutex> lock(mutex);
      tids.insert(static_cast<long>(::syscall(SYS_gettid)));
    });
  }
  EXPECT_GE(parallel_chunks_workers(), 3);
  EXPECT_LE(static_cast<int>(tids.size()), 1 + parallel_chunks_workers());
}

}  // namespace
}  // namespace partita
