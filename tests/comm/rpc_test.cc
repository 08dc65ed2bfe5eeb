// RpcEndpoint over the in-process transport: threads play ranks.
#include "partita/comm/rpc.h"

#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <cstring>
#include <future>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>

#include "partita/comm/errors.h"
#include "partita/comm/inproc_transport.h"
#include "partita/comm/request_kinds.h"
#include "partita/comm/wire.h"
#include "partita/core/timer.h"

namespace partita {
namespace {

std::vector<uint8_t> encode(uint64_t value) {
  std::vector<uint8_t> out(sizeof(value));
  std::memcpy(out.data(), &value, sizeof(value));
  return out;
}

uint64_t decode(const uint8_t* data, size_t size) {
  EXPECT_EQ(size, sizeof(uint64_t));
  uint64_t value = 0;
  if (size == sizeof(value)) std::memcpy(&value, data, sizeof(value));
  return value;
}

// The reply every test server computes: depends on server, client and payload.
uint64_t expected_reply(int server, int client, uint64_t value) {
  return value * 1000003u + static_cast<uint64_t>(server) * 101u + static_cast<uint64_t>(client);
}

RpcHandler computing_handler(int server, int max_sleep_us = 0) {
  auto rng = std::make_shared<std::mt19937>(static_cast<unsigned>(server) + 17u);
  return [server, max_sleep_us, rng](int source, const uint8_t* data, size_t size) {
    if (max_sleep_us > 0) {
      // Only the service thread calls the handler, so the generator needs no lock.
      std::this_thread::sleep_for(std::chrono::microseconds((*rng)() % max_sleep_us));
    }
    return encode(expected_reply(server, source, decode(data, size)));
  };
}

RpcOptions short_timeout(double seconds) {
  RpcOptions options;
  options.timeout_s = seconds;
  return options;
}

// One endpoint per rank of an in-process world, all serving computing_handler.
struct Cluster {
  Cluster(int n, int max_sleep_us = 0, RpcOptions options = {}) : world(n) {
    for (int r = 0; r < n; ++r) {
      endpoints.push_back(std::make_unique<RpcEndpoint>(
          world.transport(r), computing_handler(r, max_sleep_us), options));
    }
  }
  // shutdown() on every rank at once, as separate processes would.
  void shutdown_all() {
    std::vector<std::thread> threads;
    for (auto& e : endpoints) threads.emplace_back([&e] { e->shutdown(); });
    for (auto& t : threads) t.join();
  }
  InProcessWorld world;
  std::vector<std::unique_ptr<RpcEndpoint>> endpoints;
};

// Every rank asks every rank (itself included) from `threads` threads, `rounds` times;
// returns the number of wrong replies.
int all_to_all(Cluster& cluster, int rank, int threads, int rounds) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> workers;
  const int n = cluster.world.size();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < rounds; ++i) {
        std::vector<RpcRequest> requests;
        // Destinations in a rotating order so replies are requested out of rank order.
        for (int k = 0; k < n; ++k) {
          const int dest = (rank + t + i + k) % n;
          const uint64_t value = static_cast<uint64_t>(rank * 1000000 + t * 10000 + i * 10 + k);
          requests.push_back(RpcRequest{dest, encode(value)});
        }
        std::vector<std::vector<uint8_t>> replies = cluster.endpoints[rank]->call_all(requests);
        for (int k = 0; k < n; ++k) {
          const uint64_t value = static_cast<uint64_t>(rank * 1000000 + t * 10000 + i * 10 + k);
          const int dest = (rank + t + i + k) % n;
          if (replies[k].size() != sizeof(uint64_t) ||
              decode(replies[k].data(), replies[k].size()) != expected_reply(dest, rank, value)) {
            ++wrong;
          }
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  return wrong.load();
}

TEST(Rpc, EchoToEveryRankIncludingSelf) {
  Cluster cluster(3);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(all_to_all(cluster, r, 1, 2), 0);
  EXPECT_EQ(cluster.endpoints[1]->call(1, encode(5)), encode(expected_reply(1, 1, 5)));
  cluster.shutdown_all();
}

// start_all/finish_all: the caller works between the halves (as DistSampler samples its own
// nodes); a Pending dropped unfinished withdraws its call, so shutdown() does not wait for it.
TEST(Rpc, StartAllThenFinishAllAndDroppedPendingIsWithdrawn) {
  Cluster cluster(3);
  RpcEndpoint& e0 = *cluster.endpoints[0];
  std::vector<RpcRequest> requests;
  requests.push_back(RpcRequest{2, encode(11)});
  requests.push_back(RpcRequest{1, encode(12)});
  RpcEndpoint::Pending pending = e0.start_all(std::move(requests));
  const uint64_t local_work = 6 * 7;  // the caller's own work while the owners serve
  std::vector<std::vector<uint8_t>> replies = e0.finish_all(std::move(pending));
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0], encode(expected_reply(2, 0, 11)));
  EXPECT_EQ(replies[1], encode(expected_reply(1, 0, 12)));
  EXPECT_EQ(local_work, 42u);
  EXPECT_TRUE(e0.finish_all(e0.start_all({})).empty());
  EXPECT_THROW(e0.start_all({RpcRequest{7, encode(1)}}), CommError);  // bad rank: nothing sent
  {
    std::vector<RpcRequest> abandoned;
    abandoned.push_back(RpcRequest{1, encode(13)});
    RpcEndpoint::Pending dropped = e0.start_all(std::move(abandoned));
  }  // withdrawn: its reply, if it comes, is dropped
  EXPECT_EQ(e0.call(1, encode(14)), encode(expected_reply(1, 0, 14)));
  cluster.shutdown_all();  // would time out if the dropped call still counted as in progress
}

TEST(Rpc, ManyConcurrentCallsWithRepliesOutOfOrderThenShutdownPerRank) {
  // Handlers sleep up to 300 us, so replies of one call_all arrive in any order. Each rank
  // shuts down as soon as its own threads are done, while others still ask it things.
  constexpr int kRanks = 4;
  Cluster cluster(kRanks, /*max_sleep_us=*/300);
  std::vector<std::thread> ranks;
  std::atomic<int> wrong{0};
  for (int r = 0; r < kRanks; ++r) {
    ranks.emplace_back([&, r] {
      wrong += all_to_all(cluster, r, /*threads=*/3, /*rounds=*/10 + 5 * r);
      cluster.endpoints[r]->shutdown();
    });
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(wrong.load(), 0);
  int64_t sent = 0;
  int64_t served = 0;
  for (auto& e : cluster.endpoints) {
    sent += e->stats().requests_sent;
    served += e->stats().requests_served;
  }
  EXPECT_EQ(sent, served);
  EXPECT_EQ(sent, int64_t{3} * kRanks * (10 + 15 + 20 + 25));
}

TEST(Rpc, RankWithoutServiceTimesOutNamingIt) {
  InProcessWorld world(3);  // rank 2 never creates an endpoint
  RpcEndpoint e0(world.transport(0), computing_handler(0), short_timeout(0.3));
  RpcEndpoint e1(world.transport(1), computing_handler(1), short_timeout(0.3));
  Stopwatch watch;
  try {
    e0.call_all({RpcRequest{1, encode(1)}, RpcRequest{2, encode(2)}});
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_STREQ(e.what(), "rank 2 did not answer within 0.3 s (call_all from rank 0)");
  }
  EXPECT_GE(watch.seconds(), 0.3);
  EXPECT_LT(watch.seconds(), 5.0);
  // shutdown() names the rank that never says bye.
  auto expect_names_rank_2 = [](RpcEndpoint& endpoint) {
    try {
      endpoint.shutdown();
      ADD_FAILURE() << "expected TimeoutError";
    } catch (const TimeoutError& e) {
      EXPECT_NE(std::string(e.what()).find(": rank 2 did not shut down within 0.3 s"),
                std::string::npos)
          << e.what();
    }
  };
  auto s0 = std::async(std::launch::async, [&] { expect_names_rank_2(e0); });
  expect_names_rank_2(e1);
  s0.get();
}

// The liveness ping is answered by the service thread, even while the handler is busy, and
// names the ranks that do not serve at all.
TEST(Rpc, UnresponsiveRanksNamesOnlyTheRanksNotServing) {
  InProcessWorld world(4);  // rank 3 never creates an endpoint
  std::atomic<bool> release{false};
  RpcEndpoint e0(world.transport(0), computing_handler(0), short_timeout(5));
  RpcEndpoint e1(world.transport(1), computing_handler(1), short_timeout(5));
  RpcEndpoint e2(
      world.transport(2),
      [&](int, const uint8_t*, size_t) {
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return std::vector<uint8_t>{};
      },
      short_timeout(5));
  // Keep rank 2's handler busy: its service thread is inside the handler.
  auto busy = std::async(std::launch::async, [&] {
    try {
      e1.call(2, encode(7));
    } catch (const std::exception&) {
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Stopwatch watch;
  const std::vector<int> silent = e0.unresponsive_ranks(0.3);
  EXPECT_GE(watch.seconds(), 0.3);
  EXPECT_LT(watch.seconds(), 5.0);
  release = true;
  busy.get();
  // Rank 2 was busy in its handler: the ping waits behind it on the same thread, so it
  // counts as silent too while blocked; rank 1 answers; rank 3 never does.
  EXPECT_EQ(silent, (std::vector<int>{2, 3}));
  EXPECT_EQ(e1.unresponsive_ranks(0.3), (std::vector<int>{3}));
}

TEST(Rpc, BlockedHandlerTimesOutThenLateReplyIsDroppedAndShutdownIsClean) {
  InProcessWorld world(2);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  RpcEndpoint e0(world.transport(0), computing_handler(0), short_timeout(0.2));
  RpcEndpoint e1(
      world.transport(1),
      [released](int source, const uint8_t* data, size_t size) {
        released.wait();
        return encode(expected_reply(1, source, decode(data, size)));
      },
      short_timeout(5));
  try {
    e0.call(1, encode(3));
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_STREQ(e.what(), "rank 1 did not answer within 0.2 s (call_all from rank 0)");
  }
  release.set_value();
  // Rank 1 still answers rank 0's own requests; the late reply was dropped, not misrouted.
  EXPECT_EQ(e1.call(0, encode(4)), encode(expected_reply(0, 1, 4)));
  auto s1 = std::async(std::launch::async, [&] { e1.shutdown(); });
  e0.shutdown();
  s1.get();
}

TEST(Rpc, HandlerExceptionBecomesCommErrorNamingTheRank) {
  InProcessWorld world(2);
  RpcEndpoint e0(world.transport(0), computing_handler(0));
  RpcEndpoint e1(world.transport(1), [](int, const uint8_t* data, size_t size) {
    if (size == 0) throw std::runtime_error("node 42 is not owned here");
    return std::vector<uint8_t>(data, data + size);
  });
  try {
    e0.call_all({RpcRequest{0, encode(1)}, RpcRequest{1, {}}});
    FAIL() << "expected CommError";
  } catch (const TimeoutError&) {
    FAIL() << "expected CommError, got TimeoutError";
  } catch (const CommError& e) {
    EXPECT_STREQ(e.what(),
                 "rank 1 failed to serve a request from rank 0: node 42 is not owned here");
  }
  // The service survives its handler's exception.
  EXPECT_EQ(e0.call(1, encode(9)), encode(9));
  auto s1 = std::async(std::launch::async, [&] { e1.shutdown(); });
  e0.shutdown();
  s1.get();
}

TEST(Rpc, ShutdownWaitsForThisRanksCallsInFlight) {
  InProcessWorld world(2);
  RpcEndpoint e0(world.transport(0), computing_handler(0));
  RpcEndpoint e1(world.transport(1), [](int source, const uint8_t* data, size_t size) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return encode(expected_reply(1, source, decode(data, size)));
  });
  auto in_flight = std::async(std::launch::async, [&] { return e0.call(1, encode(7)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto s0 = std::async(std::launch::async, [&] { e0.shutdown(); });
  auto s1 = std::async(std::launch::async, [&] { e1.shutdown(); });
  EXPECT_EQ(in_flight.get(), encode(expected_reply(1, 0, 7)));
  s0.get();
  s1.get();
  EXPECT_THROW(e0.call(1, encode(1)), CommError);
  e0.shutdown();  // a second call after success returns at once
}

TEST(Rpc, RejectsBadRequests) {
  Cluster cluster(2);
  RpcEndpoint& e0 = *cluster.endpoints[0];
  EXPECT_TRUE(e0.call_all({}).empty());
  EXPECT_THROW(e0.call_all({RpcRequest{1, {}}, RpcRequest{1, {}}}), CommError);
  EXPECT_THROW(e0.call(2, {}), CommError);
  EXPECT_THROW(e0.call(-1, {}), CommError);
  cluster.shutdown_all();
}

TEST(Rpc, DestructorWithoutShutdownReturnsPromptly) {
  Stopwatch watch;
  {
    Cluster cluster(4, 0, short_timeout(0.3));
    EXPECT_EQ(all_to_all(cluster, 2, 2, 3), 0);
    // Rank 3 says bye but nobody else does: its shutdown() names them.
    try {
      cluster.endpoints[3]->shutdown();
      FAIL() << "expected TimeoutError";
    } catch (const TimeoutError& e) {
      EXPECT_NE(std::string(e.what()).find("ranks 0, 1, 2 did not shut down"), std::string::npos)
          << e.what();
    }
    // The others still serve after rank 3's failed shutdown.
    cluster.endpoints[1]->call_all({RpcRequest{0, encode(1)}});
    // The destructors (ranks 0-2 never called shutdown()) must not wait for anyone.
  }
  EXPECT_LT(watch.seconds(), 10.0);
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

TEST(Rpc, IdleRanksDoNotSpin) {
  Cluster cluster(2);
  EXPECT_EQ(all_to_all(cluster, 0, 1, 1), 0);
  const double cpu_before = process_cpu_seconds();
  Stopwatch watch;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double cpu = process_cpu_seconds() - cpu_before;
  const double wall = watch.seconds();
  std::printf("idle: 2 in-process ranks, %.2f s wall, %.4f s CPU\n", wall, cpu);
  RecordProperty("idle_cpu_ms", static_cast<int>(cpu * 1000));
  // A spinning service thread would use about one CPU-second per wall second; the backoff
  // keeps it near 1%. The bound is loose on purpose (shared, noisy machines).
  EXPECT_LT(cpu, 0.5 * wall);
  cluster.shutdown_all();
}

TEST(RpcRouter, RoutesByKindAndRefusesAKindRegisteredTwiceNamingBoth) {
  const uint64_t a = request_kind(RequestService::kTest, 0);
  const uint64_t b = request_kind(RequestService::kTest, 1);
  RpcRouter router;
  router.add(a, "first service", [](int, WireReader&) { return std::vector<uint8_t>{1}; });
  router.add(b, [](int, WireReader&) { return std::vector<uint8_t>{2}; });
  try {
    router.add(a, "second service", [](int, WireReader&) { return std::vector<uint8_t>{3}; });
    ADD_FAILURE() << "a kind registered twice was accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'first service'"), std::string::npos) << what;
    EXPECT_NE(what.find("'second service'"), std::string::npos) << what;
    EXPECT_NE(what.find("service 'test'"), std::string::npos) << what;
  }
  const RpcHandler handler = router.handler();
  for (uint64_t kind : {a, b}) {
    uint8_t request[8];
    std::memcpy(request, &kind, sizeof kind);
    EXPECT_EQ(handler(0, request, sizeof request), std::vector<uint8_t>{uint8_t(kind - a + 1)});
  }
  const uint64_t unknown = request_kind(RequestService::kTest, 2);
  uint8_t request[8];
  std::memcpy(request, &unknown, sizeof unknown);
  EXPECT_THROW(handler(0, request, sizeof request), CommError);
}

TEST(RpcRouter, RefusesACodeOutsideTheRegistry) {
  RpcRouter router;
  try {
    router.add(7, "stray", [](int, WireReader&) { return std::vector<uint8_t>{}; });
    ADD_FAILURE() << "a code in no registry entry was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'stray'"), std::string::npos) << e.what();
  }
}

// Compile-time checks of the registry: the named codes are the wire's codes, and an entry
// owns exactly its range.
static_assert(kRequestFeatures == 1 && kRequestLabels == 2 && kRequestSampleHop == 3 &&
              kRequestDegrees == 4);
static_assert(find_request_kind(kRequestTrainerDone)->service == RequestService::kTrainerDone);
static_assert(find_request_kind(request_kind(RequestService::kEmbedding, (3 << 8) | 4))->service ==
              RequestService::kEmbedding);
static_assert(find_request_kind(0) == nullptr && find_request_kind(5) == nullptr);

TEST(RequestKinds, EveryEntryOwnsItsRangeAndNoOther) {
  EXPECT_TRUE(request_kinds_are_valid());
  for (const RequestKindEntry& e : kRequestKinds) {
    EXPECT_EQ(find_request_kind(e.first), &e) << e.name;
    EXPECT_EQ(find_request_kind(e.first + e.count - 1), &e) << e.name;
    EXPECT_EQ(request_kind(e.service, e.count - 1), e.first + e.count - 1) << e.name;
    EXPECT_THROW(request_kind(e.service, e.count), std::out_of_range) << e.name;
    const RequestKindEntry* after = find_request_kind(e.first + e.count);
    EXPECT_TRUE(after == nullptr || after != &e) << e.name;
  }
}

TEST(RequestKinds, EveryServiceOfTheEngineRegistersItsRoutesOnce) {
  // Every entry's first code routes, once; a second registration of any of them is refused.
  RpcRouter router;
  for (const RequestKindEntry& e : kRequestKinds)
    router.add(e.first, [](int, WireReader&) { return std::vector<uint8_t>{}; });
  for (const RequestKindEntry& e : kRequestKinds)
    EXPECT_THROW(router.add(e.first, [](int, WireReader&) { return std::vector<uint8_t>{}; }),
                 Error)
        << e.name;
}

}  // namespace
}  // namespace partita
