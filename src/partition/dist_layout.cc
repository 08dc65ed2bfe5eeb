// The distributed renumbering and the placement of each rank's share in the parts' files.
#include "dist_layout.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "byte_pack.h"
#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "partita/data/shard.h"

namespace partita::partition {
namespace {

std::vector<uint8_t> to_bytes(const std::vector<int64_t>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(int64_t));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<int64_t> from_bytes(const std::vector<uint8_t>& b) {
  PARTITA_CHECK(b.size() % sizeof(int64_t) == 0, Error, "internal: {} bytes are not int64s",
                b.size());
  std::vector<int64_t> out(b.size() / sizeof(int64_t));
  if (!out.empty()) std::memcpy(out.data(), b.data(), b.size());
  return out;
}

}  // namespace

DistLayout::DistLayout(int64_t num_nodes, int64_t node_begin, const std::vector<int32_t>& part,
                       const graph::Csr& in_edges, int num_parts, const data::HeteroSchema* schema,
                       DistComm& comm)
    : ranks_(comm.size()), num_parts_(num_parts) {
  const int P = num_parts, R = ranks_, me = comm.rank();
  const int T = schema != nullptr ? schema->num_types() : 0;
  for (int r = 0; r <= R; ++r)
    block_starts_.push_back(r < R ? data::node_block(num_nodes, r, R).first : num_nodes);
  // This rank's counts: nodes per part, edges per part, nodes per (part, type).
  const size_t stride = 2 + static_cast<size_t>(T);
  std::vector<int64_t> mine(static_cast<size_t>(P) * stride, 0);
  const int64_t n = static_cast<int64_t>(part.size());
  for (int64_t i = 0; i < n; ++i) {
    const size_t p = static_cast<size_t>(part[i]);
    ++mine[p * stride];
    mine[p * stride + 1] += in_edges.indptr[i + 1] - in_edges.indptr[i];
    if (T > 0) ++mine[p * stride + 2 + schema->type_of(node_begin + i)];
  }
  std::vector<std::vector<int64_t>> all;
  for (const auto& bytes : comm.allgather(to_bytes(mine))) all.push_back(from_bytes(bytes));

  ranges_.assign(static_cast<size_t>(P) + 1, 0);
  part_edges_.assign(static_cast<size_t>(P), 0);
  node_offset_.assign(static_cast<size_t>(R) * P, 0);
  edge_offset_.assign(static_cast<size_t>(R) * P, 0);
  std::vector<int64_t> type_nodes(static_cast<size_t>(P) * T, 0);
  for (int p = 0; p < P; ++p) {
    int64_t nodes = 0, edges = 0;
    for (int r = 0; r < R; ++r) {
      node_offset_[r * P + p] = nodes;
      edge_offset_[r * P + p] = edges;
      nodes += all[r][p * stride];
      edges += all[r][p * stride + 1];
      for (int t = 0; t < T; ++t) type_nodes[p * T + t] += all[r][p * stride + 2 + t];
    }
    ranges_[p + 1] = ranges_[p] + nodes;
    part_edges_[p] = edges;
  }
  if (T > 0) {
    for (int p = 0; p < P; ++p) {
      std::vector<int64_t> starts{ranges_[p]};
      for (int t = 0; t < T; ++t) starts.push_back(starts.back() + type_nodes[p * T + t]);
      type_starts_.push_back(std::move(starts));
    }
  }
  std::vector<int64_t> cursor(static_cast<size_t>(P));
  for (int p = 0; p < P; ++p) cursor[p] = ranges_[p] + node_offset_[me * P + p];
  block_new_id_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) block_new_id_[i] = cursor[part[i]]++;
}

int DistLayout::owner_part(int64_t gid) const {
  return static_cast<int>(std::upper_bound(ranges_.begin(), ranges_.end(), gid) - ranges_.begin()) -
         1;
}

int DistLayout::block_owner(int64_t v) const {
  // node_block's starts are floor(n * r / R): the owner is floor(v * R / n) or one off it.
  const int64_t n = block_starts_.back();
  int r = static_cast<int>(static_cast<__int128>(v) * ranks_ / n);
  while (r > 0 && block_starts_[r] > v) --r;
  while (r + 1 < ranks_ && block_starts_[r + 1] <= v) ++r;
  return r;
}

std::vector<int64_t> map_sources(const graph::Csr& in_edges, int64_t first, int64_t last,
                                 const DistLayout& layout, int64_t node_begin, DistComm& comm,
                                 int threads) {
  const int R = comm.size();
  const int64_t num_nodes = layout.ranges().back();
  const int64_t count = last - first;
  // (source, entry) sorted by source: the distinct sources, in order, are what each block
  // owner is asked (blocks are ordered by id, so each owner's share is one stretch), and one
  // more pass puts each answer at its entries. Out-of-range ids are left out and fail after
  // the exchange.
  std::vector<std::pair<int64_t, int64_t>> keyed(static_cast<size_t>(count));
  std::atomic<int64_t> bad{-1};
  parallel_chunks(0, count, int64_t{1} << 16, threads, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t v = in_edges.indices[first + k];
      if (v < 0 || v >= num_nodes) bad.store(v, std::memory_order_relaxed);
      keyed[k] = {v < 0 || v >= num_nodes ? -1 : v, k};
    }
  });
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::vector<int64_t>> asked(static_cast<size_t>(R));
  int64_t previous = -1;
  for (const auto& [v, k] : keyed) {
    if (v < 0 || v == previous) continue;
    asked[layout.block_owner(v)].push_back(v);
    previous = v;
  }
  std::vector<std::vector<uint8_t>> requests(static_cast<size_t>(R));
  for (int r = 0; r < R; ++r) requests[r] = to_bytes(asked[r]);
  std::vector<std::vector<uint8_t>> questions = comm.alltoall(std::move(requests));
  const std::vector<int64_t>& new_id = layout.block_new_id();
  std::string internal;
  for (auto& q : questions) {
    std::vector<int64_t> ids = from_bytes(q);
    for (int64_t& v : ids) {
      const int64_t i = v - node_begin;
      // Asked of the block owner, so always inside: a violation is a bug of the asker.
      if (i < 0 || i >= static_cast<int64_t>(new_id.size())) {
        internal =
            fmt::format("internal: asked for the new id of {}, outside this rank's block", v);
        v = -1;
        continue;
      }
      v = new_id[i];
    }
    q = to_bytes(ids);
  }
  std::vector<std::vector<uint8_t>> replies = comm.alltoall(std::move(questions));
  PARTITA_CHECK(internal.empty(), Error, "{}", internal);
  PARTITA_CHECK(bad.load() < 0, Error, "source id {} is outside [0, {})", bad.load(), num_nodes);
  std::vector<int64_t> answers;  // owners in order: the distinct sources' new ids, ascending
  for (int r = 0; r < R; ++r) {
    const std::vector<int64_t> a = from_bytes(replies[r]);
    PARTITA_CHECK(a.size() == asked[r].size(), Error,
                  "internal: {} new ids for {} asked of rank {}", a.size(), asked[r].size(), r);
    answers.insert(answers.end(), a.begin(), a.end());
  }
  std::vector<int64_t> mapped(static_cast<size_t>(count));
  int64_t slot = -1;
  previous = -1;
  for (const auto& [v, k] : keyed) {
    if (v != previous) ++slot;
    previous = v;
    mapped[k] = answers[slot];
  }
  return mapped;
}

}  // namespace partita::partition
