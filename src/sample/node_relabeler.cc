#include "partita/sample/node_relabeler.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include "partita/core/error.h"

namespace partita::sample {
namespace {

// Ids ahead whose slot is prefetched in relabel().
constexpr int64_t kPrefetchDistance = 32;
constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

void NodeRelabeler::clear() {
  nodes_.clear();
  if (++stamp_ == 0) {  // wrapped after 2^32 batches: really wipe the table once
    for (uint64_t i = 0; i <= mask_ && slots_; ++i) slots_[i].stamp = 0;
    stamp_ = 1;
  }
}

void NodeRelabeler::reserve(int64_t count) {
  if (count > max_size_) grow(count);
  nodes_.reserve(static_cast<size_t>(count));
}

void NodeRelabeler::grow(int64_t count) {
  PARTITA_CHECK(count <= std::numeric_limits<uint32_t>::max(), Error,
                "sample: {} nodes in one batch exceed the relabeler's 2^32 limit", count);
  int bits = 4;
  while ((int64_t{1} << bits) / 3 * 2 < count) ++bits;
  const size_t bytes = (size_t{1} << bits) * sizeof(Slot);
  // Big tables: 2 MiB-aligned and advised to use huge pages (random probes otherwise miss
  // the TLB). Advice only: where THP is off this is an ordinary allocation.
  const size_t align = bytes >= kHugePage ? kHugePage : alignof(Slot);
  slots_.reset(static_cast<Slot*>(std::aligned_alloc(align, std::max(bytes, align))));
  if (!slots_) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (align == kHugePage) madvise(slots_.get(), bytes, MADV_HUGEPAGE);
#endif
  std::memset(static_cast<void*>(slots_.get()), 0, bytes);  // stamp 0: empty
  stamp_ = 1;
  mask_ = (uint64_t{1} << bits) - 1;
  shift_ = 64 - bits;
  max_size_ = (int64_t{1} << bits) / 3 * 2;
  std::vector<int64_t> old;
  old.swap(nodes_);
  nodes_.reserve(std::max(old.capacity(), static_cast<size_t>(count)));
  for (int64_t node : old) insert_unchecked(node);
}

void NodeRelabeler::relabel(int64_t* ids, int64_t count) {
  if (size() + count > max_size_) grow(size() + count);  // no check inside the loop
  for (int64_t i = 0; i < count; ++i) {
    if (i + kPrefetchDistance < count) {
      __builtin_prefetch(&slots_[slot_of(ids[i + kPrefetchDistance])]);
    }
    ids[i] = insert_unchecked(ids[i]);
  }
}

}  // namespace partita::sample
