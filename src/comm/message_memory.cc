#include "partita/comm/message_memory.h"

#include <cstdlib>  // defines __GLIBC__ on glibc, which the test below needs

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace partita {

bool keep_message_memory() {
#if defined(__GLIBC__)
  constexpr int kMmapThreshold = 32 << 20;  // glibc's maximum (HEAP_MAX_SIZE / 2)
  constexpr int kTrimThreshold = 256 << 20;
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1;
  return mmap_ok && trim_ok;
#else
  return false;
#endif
}

}  // namespace partita
