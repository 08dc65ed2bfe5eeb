#pragma once
// Global id -> dense local id, in order of first insertion: the relabelling behind blocks.
// An open-addressing table (linear probing, 16-byte slots) that is kept between batches:
// clear() is O(1) (a generation stamp marks live slots), so a sampler thread reuses one
// table and allocates nothing in steady state. It beats absl::flat_hash_map here because
// relabel() prefetches the slots of ids a few positions ahead, and because a big table
// asks for transparent huge pages, which spares a TLB miss per lookup
// (bench/sample_kernel_bench compares them).
//
// Not thread-safe: one relabeler per thread.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace partita::sample {

class NodeRelabeler {
 public:
  // Forgets every node; keeps the memory.
  void clear();
  // Room for `count` nodes in total without growing (the table is kept <= 2/3 full).
  void reserve(int64_t count);

  // Local id of `node`, which gets the next id (= size() before the call) if it is new.
  int64_t insert(int64_t node) {
    if (size() >= max_size_) grow(size() + 1);
    return insert_unchecked(node);
  }
  // Replaces ids[i] by insert(ids[i]) for i in [0, count), in order.
  void relabel(int64_t* ids, int64_t count);

  int64_t size() const { return static_cast<int64_t>(nodes_.size()); }
  // Global ids by local id (the inverse map), in order of first insertion.
  const std::vector<int64_t>& nodes() const { return nodes_; }

 private:
  struct Slot {
    int64_t key;
    uint32_t value;
    uint32_t stamp;  // live iff == stamp_
  };

  uint64_t slot_of(int64_t node) const {
    return (static_cast<uint64_t>(node) * 0x9e3779b97f4a7c15ULL) >> shift_;
  }
  int64_t insert_unchecked(int64_t node) {
    uint64_t h = slot_of(node);
    while (true) {
      Slot& s = slots_[h];
      if (s.stamp != stamp_) {
        s.key = node;
        s.value = static_cast<uint32_t>(nodes_.size());
        s.stamp = stamp_;
        nodes_.push_back(node);
        return s.value;
      }
      if (s.key == node) return s.value;
      h = (h + 1) & mask_;
    }
  }
  void grow(int64_t count);

  struct Free {
    void operator()(Slot* p) const { std::free(p); }
  };
  std::unique_ptr<Slot[], Free> slots_;
  std::vector<int64_t> nodes_;
  uint64_t mask_ = 0;
  int shift_ = 64;
  int64_t max_size_ = 0;  // size() allowed before growing
  uint32_t stamp_ = 1;
};

}  // namespace partita::sample
