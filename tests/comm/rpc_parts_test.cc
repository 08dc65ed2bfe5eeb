// RpcEndpoint's large messages and send failures (rpc.h, "Large messages", "Send failures"),
// over the in-process transport with a lowered max_message_bytes so that parts are small.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "partita/comm/errors.h"
#include "partita/comm/inproc_transport.h"
#include "partita/comm/rpc.h"

namespace partita {
namespace {

// Bytes `n` of a pattern that depends on `seed`, so a misplaced or lost part shows.
std::vector<uint8_t> pattern(size_t n, uint64_t seed) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<uint8_t>((i * 131 + seed * 7 + i / 251) & 0xff);
  return out;
}

// Request: [uint64 reply size][uint64 seed][request filler of any length, checked].
// Reply: pattern(reply size, seed * 1000 + server). "throw" as filler: the handler throws a
// long message.
std::vector<uint8_t> request(uint64_t reply_bytes, uint64_t seed, size_t filler) {
  std::vector<uint8_t> out(16);
  std::memcpy(out.data(), &reply_bytes, 8);
  std::memcpy(out.data() + 8, &seed, 8);
  const std::vector<uint8_t> tail = pattern(filler, seed);
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

RpcHandler pattern_handler(int server) {
  return [server](int, const uint8_t* data, size_t size) {
    if (size < 16) throw CommError("short request");
    uint64_t reply_bytes = 0, seed = 0;
    std::memcpy(&reply_bytes, data, 8);
    std::memcpy(&seed, data + 8, 8);
    const std::vector<uint8_t> filler(data + 16, data + size);
    if (filler != pattern(size - 16, seed)) throw CommError("request bytes damaged");
    if (reply_bytes == 0xdead) throw CommError(std::string(500, 'x') + "|end of a long error");
    return pattern(reply_bytes, seed * 1000 + static_cast<uint64_t>(server));
  };
}

struct Pair {
  explicit Pair(size_t max_message_bytes) : world(2) {
    RpcOptions options;
    options.timeout_s = 10;
    options.max_message_bytes = max_message_bytes;
    for (int r = 0; r < 2; ++r)
      endpoints.push_back(
          std::make_unique<RpcEndpoint>(world.transport(r), pattern_handler(r), options));
  }
  void shutdown_all() {
    std::thread other([this] { endpoints[1]->shutdown(); });
    endpoints[0]->shutdown();
    other.join();
  }
  InProcessWorld world;
  std::vector<std::unique_ptr<RpcEndpoint>> endpoints;
};

TEST(RpcParts, MessagesOverTheLimitArriveWholeFromConcurrentCallers) {
  Pair pair(/*max_message_bytes=*/64);  // 40 payload bytes per part
  // Sizes around the part boundaries, with requests over the limit too; 3 threads per rank
  // so parts of different messages to one rank interleave.
  const std::vector<size_t> sizes = {0, 1, 39, 40, 41, 56, 57, 64, 65, 1000, 4099};
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int rank = 0; rank < 2; ++rank) {
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&, rank, t] {
        for (size_t i = 0; i < sizes.size(); ++i) {
          const uint64_t seed = static_cast<uint64_t>(rank * 100 + t * 10) + i;
          std::vector<RpcRequest> requests;
          for (int dest = 0; dest < 2; ++dest)
            requests.push_back({dest, request(sizes[i], seed, sizes[sizes.size() - 1 - i])});
          auto replies = pair.endpoints[rank]->call_all(std::move(requests));
          for (int dest = 0; dest < 2; ++dest)
            if (replies[dest] != pattern(sizes[i], seed * 1000 + static_cast<uint64_t>(dest)))
              ++wrong;
        }
      });
    }
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(pair.endpoints[1]->stats().requests_served, 2 * 3 * static_cast<int64_t>(sizes.size()));
  pair.shutdown_all();
}

TEST(RpcParts, LongHandlerErrorArrivesWhole) {
  Pair pair(/*max_message_bytes=*/64);
  try {
    pair.endpoints[0]->call(1, request(0xdead, 1, 0));
    FAIL() << "no error";
  } catch (const CommError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 1 failed to serve"), std::string::npos) << what;
    EXPECT_NE(what.find(std::string(500, 'x') + "|end of a long error"), std::string::npos);
  }
  pair.shutdown_all();
}

TEST(RpcParts, RejectsALimitTooSmallForAPart) {
  InProcessWorld world(1);
  RpcOptions options;
  options.max_message_bytes = 63;
  EXPECT_THROW(RpcEndpoint(world.transport(0), pattern_handler(0), options), CommError);
}

// A transport that refuses messages over `limit` bytes, as MPI refuses 2^31 bytes.
class LimitedTransport : public Transport {
 public:
  LimitedTransport(Transport& inner, size_t limit) : inner_(inner), limit_(limit) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  void send(int dest, int tag, std::vector<uint8_t> data) override {
    if (data.size() > limit_)
      throw CommError("test transport: " + std::to_string(data.size()) + " bytes is too many");
    inner_.send(dest, tag, std::move(data));
  }
  std::optional<Message> poll() override { return inner_.poll(); }
  size_t progress() override { return inner_.progress(); }

 private:
  Transport& inner_;
  size_t limit_;
};

TEST(RpcParts, ReplyTheTransportRefusesBecomesAnErrorNamingRankAndRequest) {
  InProcessWorld world(2);
  LimitedTransport limited0(world.transport(0), 500), limited1(world.transport(1), 500);
  RpcOptions options;
  options.timeout_s = 10;  // max_message_bytes left at its default: the transport refuses
  RpcEndpoint client(limited0, pattern_handler(0), options);
  RpcEndpoint server(limited1, pattern_handler(1), options);
  try {
    client.call(1, request(1000, 5, 0));
    FAIL() << "no error";
  } catch (const CommError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 1 could not send its 1000-byte reply to request"), std::string::npos)
        << what;
    EXPECT_NE(what.find("of rank 0"), std::string::npos) << what;
    EXPECT_NE(what.find("too many"), std::string::npos) << what;
  }
  // The service thread of rank 1 survived: it still answers.
  EXPECT_EQ(client.call(1, request(100, 6, 0)), pattern(100, 6001));
  // A request the transport refuses throws on the caller, naming the destination.
  try {
    client.call(1, request(8, 7, 600));
    FAIL() << "no error";
  } catch (const CommError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("could not send request"), std::string::npos) << what;
    EXPECT_NE(what.find("to rank 1"), std::string::npos) << what;
  }
  std::thread other([&] { server.shutdown(); });
  client.shutdown();
  other.join();
}

TEST(RpcParts, PartsGetPastATransportLimit) {
  InProcessWorld world(2);
  LimitedTransport limited0(world.transport(0), 500), limited1(world.transport(1), 500);
  RpcOptions options;
  options.timeout_s = 10;
  options.max_message_bytes = 500;
  RpcEndpoint client(limited0, pattern_handler(0), options);
  RpcEndpoint server(limited1, pattern_handler(1), options);
  EXPECT_EQ(client.call(1, request(100000, 9, 2000)), pattern(100000, 9001));
  std::thread other([&] { server.shutdown(); });
  client.shutdown();
  other.join();
}

}  // namespace
}  // namespace partita
