// Block owners, the renumbering across ranks and the placement of each rank's share in the
// parts' files (layout.h).
#include "layout.h"

#include <algorithm>

#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "partita/data/shard.h"

namespace partita::partition {

BlockOwner::BlockOwner(int64_t num_nodes, int ranks)
    : begin_(static_cast<size_t>(ranks) + 1), num_nodes_(num_nodes), ranks_(ranks) {
  for (int r = 0; r <= ranks; ++r) begin_[r] = data::node_block(num_nodes, r, ranks).first;
}

int BlockOwner::operator()(int64_t v) const {
  // Blocks start at floor(n * r / R): the guess v * R / n is at most one block off.
  int r = num_nodes_ > 0 ? static_cast<int>(static_cast<__int128>(v) * ranks_ / num_nodes_) : 0;
  if (r >= ranks_) r = ranks_ - 1;
  while (r > 0 && v < begin_[r]) --r;
  while (r + 1 < ranks_ && v >= begin_[r + 1]) ++r;
  return r;
}

PartLayout::PartLayout(int64_t node_begin, const std::vector<int32_t>& part,
                       const graph::Csr& in_edges, const std::vector<int64_t>* const (&splits)[3],
                       int num_parts, const data::HeteroSchema* schema, DistComm& comm)
    : ranks_(comm.size()), num_parts_(num_parts), node_begin_(node_begin) {
  const int P = num_parts;
  const int T = schema != nullptr ? schema->num_types() : 0;
  // This rank's counts per part: nodes, edges, split ids, nodes per type.
  stride_ = 5 + static_cast<size_t>(T);
  std::vector<int64_t> mine(static_cast<size_t>(P) * stride_, 0);
  const int64_t n = static_cast<int64_t>(part.size());
  for (int64_t i = 0; i < n; ++i) {
    const size_t p = static_cast<size_t>(part[i]);
    ++mine[p * stride_];
    mine[p * stride_ + 1] += in_edges.indptr[i + 1] - in_edges.indptr[i];
    if (T > 0) ++mine[p * stride_ + 5 + schema->type_of(node_begin + i)];
  }
  for (size_t k = 0; k < 3; ++k)
    for (int64_t id : *splits[k]) ++mine[part[id - node_begin] * stride_ + 2 + k];
  counts_ = offsets_over_ranks(mine, comm);

  ranges_.assign(1, 0);
  std::vector<int64_t> cursor;  // this rank's next new id per part
  for (int p = 0; p < P; ++p) {
    ranges_.push_back(ranges_[p] + counts_.total[p * stride_]);
    cursor.push_back(ranges_[p] + counts_.first[p * stride_]);
    if (T == 0) continue;
    std::vector<int64_t>& starts = type_starts_.emplace_back(1, ranges_[p]);
    for (int t = 0; t < T; ++t)
      starts.push_back(starts.back() + counts_.total[p * stride_ + 5 + t]);
  }
  block_new_id_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) block_new_id_[i] = cursor[part[i]]++;
}

int PartLayout::owner_part(int64_t gid) const {
  return static_cast<int>(std::upper_bound(ranges_.begin(), ranges_.end(), gid) - ranges_.begin()) -
         1;
}

std::vector<int64_t> map_sources(const int64_t* ids, int64_t count, const PartLayout& layout,
                                 DistComm& comm, int threads, RankFailure& failure) {
  const int R = comm.size();
  const int64_t node_begin = layout.node_begin();
  const int64_t num_nodes = layout.ranges().back();
  const std::vector<int64_t>& new_id = layout.block_new_id();
  const int64_t block_end = node_begin + static_cast<int64_t>(new_id.size());
  // Sources of this rank's block are looked up here; -1 marks the others (and -2 an id out
  // of range, which fails after the exchange).
  std::vector<int64_t> mapped(static_cast<size_t>(count));
  parallel_chunks(0, count, int64_t{1} << 16, threads, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t v = ids[k];
      mapped[k] = v < 0 || v >= num_nodes            ? -2
                  : v >= node_begin && v < block_end ? new_id[v - node_begin]
                                                     : -1;
    }
  });
  // (source, entry) of the others, sorted by source: the distinct sources, in order, are
  // what each block owner is asked (blocks are ordered by id, so each owner's share is one
  // stretch), and one more pass puts each answer at its entries.
  std::vector<std::pair<int64_t, int64_t>> keyed;
  for (int64_t k = 0; k < count; ++k)
    if (mapped[k] == -1) keyed.emplace_back(ids[k], k);
  std::sort(keyed.begin(), keyed.end());
  const BlockOwner owner(num_nodes, R);
  std::vector<std::vector<int64_t>> asked(static_cast<size_t>(R));
  for (size_t j = 0; j < keyed.size(); ++j)
    if (j == 0 || keyed[j].first != keyed[j - 1].first)
      asked[owner(keyed[j].first)].push_back(keyed[j].first);
  std::string internal;
  const std::vector<std::vector<int64_t>> replies =
      ask_ranks(std::move(asked), 1, comm, [&](const int64_t* v) -> int64_t {
        const int64_t i = *v - node_begin;
        // Asked of the block owner, so always inside: a violation is a bug of the asker.
        if (i >= 0 && i < static_cast<int64_t>(new_id.size())) return new_id[i];
        internal =
            fmt::format("internal: asked for the new id of {}, outside this rank's block", *v);
        return -1;
      });
  failure.run([&] {
    PARTITA_CHECK(internal.empty(), Error, "{}", internal);
    const auto bad = std::find(mapped.begin(), mapped.end(), -2);  // the first out of range
    PARTITA_CHECK(bad == mapped.end(), Error, "source id {} is outside [0, {})",
                  ids[bad - mapped.begin()], num_nodes);
  });
  std::vector<int64_t> answers;  // owners in order: the distinct sources' new ids, ascending
  for (const std::vector<int64_t>& reply : replies)
    answers.insert(answers.end(), reply.begin(), reply.end());
  for (size_t j = 0, slot = 0; j < keyed.size(); ++j) {
    if (j > 0 && keyed[j].first != keyed[j - 1].first) ++slot;
    mapped[keyed[j].second] = answers[slot];
  }
  return mapped;
}

}  // namespace partita::partition
