// keep_message_memory(): multi-MiB buffers come from the reusable heap, not fresh mappings.
#include "partita/comm/message_memory.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace partita {
namespace {

#if defined(__GLIBC__)
TEST(MessageMemory, MultiMebibyteBuffersAreNotMappedPerMessage) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's allocator replaces glibc malloc: its policy does not apply";
#endif
  ASSERT_TRUE(keep_message_memory());
  EXPECT_TRUE(keep_message_memory());  // idempotent
  const size_t mapped_before = mallinfo2().hblkhd;
  std::vector<uint8_t> buffer(size_t{24} << 20);  // a 24 MiB reply, under the 32 MiB threshold
  buffer[12345] = 1;
  // Without the policy glibc maps this block on its own (its threshold starts at 128 KiB).
  EXPECT_LT(mallinfo2().hblkhd, mapped_before + (size_t{24} << 20));
}
#endif

}  // namespace
}  // namespace partita
