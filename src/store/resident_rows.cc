// Resident rows: see partita/store/resident_rows.h.
#include "partita/store/resident_rows.h"

#include <algorithm>

#include "partita/core/error.h"

namespace partita::store {

ResidentRows::ResidentRows(int64_t num_nodes, std::vector<int64_t> ids)
    : num_nodes_(num_nodes), ids_(std::move(ids)) {
  PARTITA_CHECK(num_nodes_ >= 0, Error, "resident rows: {} nodes", num_nodes_);
  std::sort(ids_.begin(), ids_.end());
  const size_t words = static_cast<size_t>((num_nodes_ + 63) / 64);
  bits_.assign(words, 0);
  before_.assign(words, 0);
  for (size_t i = 0; i < ids_.size(); ++i) {
    const int64_t gid = ids_[i];
    PARTITA_CHECK(gid >= 0 && gid < num_nodes_, Error, "resident rows: node {} is outside [0, {})",
                  gid, num_nodes_);
    PARTITA_CHECK(i == 0 || ids_[i - 1] != gid, Error, "resident rows: node {} given twice", gid);
    bits_[static_cast<size_t>(gid >> 6)] |= uint64_t{1} << (gid & 63);
  }
  int64_t count = 0;
  for (size_t w = 0; w < words; ++w) {
    before_[w] = count;
    count += __builtin_popcountll(bits_[w]);
  }
}

void ResidentRows::split(ArrayView<const int64_t> ids, ResidentHits* hits,
                         std::vector<int64_t>* misses) const {
  for (int64_t i = 0; i < ids.size(); ++i) {
    const int64_t s = slot(ids[i]);
    if (s >= 0) {
      if (hits != nullptr) {
        hits->positions.push_back(i);
        hits->slots.push_back(s);
      }
    } else if (misses != nullptr) {
      misses->push_back(ids[i]);
    }
  }
}

int64_t ResidentRows::bytes() const {
  return static_cast<int64_t>(bits_.size() * sizeof(uint64_t) + before_.size() * sizeof(int64_t) +
                              ids_.size() * sizeof(int64_t));
}

}  // namespace partita::store
