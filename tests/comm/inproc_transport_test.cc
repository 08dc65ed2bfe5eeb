#include "partita/comm/inproc_transport.h"

#include <gtest/gtest.h>

#include "partita/comm/errors.h"

namespace partita {
namespace {

std::vector<uint8_t> bytes(std::initializer_list<uint8_t> list) { return list; }

TEST(InProcessTransport, DeliversInOrderPerPairWithSourceAndTag) {
  InProcessWorld world(3);
  EXPECT_EQ(world.size(), 3);
  Transport& t0 = world.transport(0);
  Transport& t2 = world.transport(2);
  EXPECT_EQ(t2.rank(), 2);
  EXPECT_EQ(t2.size(), 3);
  EXPECT_FALSE(t2.poll().has_value());

  t0.send(2, 7, bytes({1, 2, 3}));
  t0.send(2, 9, bytes({4}));
  t2.send(2, 0, {});  // to itself, empty
  EXPECT_EQ(t0.progress(), 0u);

  std::optional<Message> m = t2.poll();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->source, 0);
  EXPECT_EQ(m->tag, 7);
  EXPECT_EQ(m->data, bytes({1, 2, 3}));
  m = t2.poll();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->tag, 9);
  m = t2.poll();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->source, 2);
  EXPECT_TRUE(m->data.empty());
  EXPECT_FALSE(t2.poll().has_value());
  EXPECT_FALSE(world.transport(1).poll().has_value());
}

TEST(InProcessTransport, RejectsBadRanksAndTags) {
  InProcessWorld world(2);
  EXPECT_THROW(world.transport(2), CommError);
  EXPECT_THROW(world.transport(-1), CommError);
  EXPECT_THROW(world.transport(0).send(2, 0, {}), CommError);
  EXPECT_THROW(world.transport(0).send(1, -1, {}), CommError);
  EXPECT_THROW(world.transport(0).send(1, Transport::kMaxTag + 1, {}), CommError);
  EXPECT_THROW(InProcessWorld(0), CommError);
}

}  // namespace
}  // namespace partita
