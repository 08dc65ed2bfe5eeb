// Link-prediction splits as the pipeline makes and writes them, in shares over a
// communicator (edge_split_steps.h), and parse_edge_split (edge_split.h).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>
#include <utility>

#include "collective.h"
#include "edge_split_draw.h"
#include "edge_split_steps.h"
#include "npy_file_at.h"
#include "partita/core/directory.h"
#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/core/random.h"
#include "partita/data/edge_arrays.h"
#include "partition_meta.h"

namespace partita::partition {
namespace {

using Pair = std::pair<int64_t, int64_t>;

double parse_fraction(const std::string& item, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  // Digits, '.', signs and exponents only: strtod would also skip spaces and read "inf".
  const bool plain =
      !item.empty() && item.find_first_not_of("0123456789.eE+-") == std::string::npos;
  const double x = plain ? std::strtod(item.c_str(), &end) : 0;
  PARTITA_CHECK_PARAM(plain && end == item.c_str() + item.size() && errno == 0 && std::isfinite(x),
                      "edge_split", "'{}' is not a list VALID,TEST of two fractions", text);
  PARTITA_CHECK_PARAM(x > 0 && x < 1, "edge_split", "fraction {} is outside (0, 1) in '{}'", item,
                      text);
  return x;
}

// Whether u -> v is stored in this rank's rows (false when v's row is another rank's).
bool row_has(const ShardGraph& g, int64_t v, int64_t u) {
  const int64_t i = v - g.node_begin;
  if (i < 0 || i >= g.in_edges.num_rows()) return false;
  const auto first = g.in_edges.indices.begin() + g.in_edges.indptr[i];
  const auto last = g.in_edges.indices.begin() + g.in_edges.indptr[i + 1];
  return std::binary_search(first, last, u);
}

// The rank holding the unordered pair {a, b} in sets shared by hash.
int pair_owner(int64_t a, int64_t b, int ranks) {
  return static_cast<int>(pair_hash(std::min(a, b), std::max(a, b)) % static_cast<uint64_t>(ranks));
}

// Calls f(k, s, d) for every stored entry k, s -> d, of this rank's rows, in order.
template <class F>
void for_each_entry(const ShardGraph& g, F&& f) {
  const graph::Csr& c = g.in_edges;
  for (int64_t i = 0; i < c.num_rows(); ++i)
    for (int64_t k = c.indptr[i]; k < c.indptr[i + 1]; ++k) f(k, c.indices[k], g.node_begin + i);
}

// For each stored entry s -> d of this rank's rows, whether it names a unit: s < d, or no
// d -> s (asked of the rank holding row s).
std::vector<uint8_t> unit_entries(const ShardGraph& g, DistComm& comm) {
  std::vector<uint8_t> unit(static_cast<size_t>(g.in_edges.num_entries()), 1);
  if (g.symmetric) {  // d -> s is stored for every s -> d
    for_each_entry(g, [&](int64_t k, int64_t s, int64_t d) { unit[k] = s < d ? 1 : 0; });
    return unit;
  }
  const int R = comm.size();
  const BlockOwner owner(g.num_nodes, R);
  std::vector<std::vector<int64_t>> ask(static_cast<size_t>(R)), where(static_cast<size_t>(R));
  for_each_entry(g, [&](int64_t k, int64_t s, int64_t d) {
    if (s < d) return;
    const int r = owner(s);
    ask[r].insert(ask[r].end(), {s, d});
    where[r].push_back(k);
  });
  const std::vector<std::vector<int64_t>> answers = ask_ranks(
      std::move(ask), 2, comm, [&](const int64_t* q) -> int64_t { return row_has(g, q[0], q[1]); });
  for (int r = 0; r < R; ++r)
    for (size_t j = 0; j < where[r].size(); ++j) unit[where[r][j]] = answers[r][j] ? 0 : 1;
  return unit;
}

// The stored entries' edge_time column, or null.
const Column* time_column(const ShardGraph& g) {
  for (const Column& c : g.edge_columns)
    if (c.name == data::kEdgeTimeName && c.dtype == DType::kInt64 && c.dim == 0) return &c;
  return nullptr;
}

int64_t entry_time(const Column& times, int64_t k) {
  int64_t t = 0;
  std::memcpy(&t, times.values.data() + k * sizeof(int64_t), sizeof(int64_t));
  return t;
}

// A split by time (edge_split.h): the latest `held` units by (time, global unit index), known
// to every rank: a unit at (time, index) >= first is held out, for test when >= first_test (the
// `valid` earliest are for validation). times[j] the time of the j-th in time order; pairs the
// held-out unordered pairs, sorted. Each rank offers its own latest `held` (32 bytes each) and
// every rank merges them.
struct TimePicks {
  Pair first, first_test;
  std::vector<int64_t> times;
  std::vector<Pair> pairs;
};

TimePicks latest_units(const ShardGraph& g, const std::vector<uint8_t>& unit, const Column& times,
                       int64_t offset, int64_t valid, int64_t held, DistComm& comm) {
  struct Unit {
    int64_t time, index, lo, hi;
  };
  const auto later = [](const Unit& a, const Unit& b) {
    return std::tie(a.time, a.index) > std::tie(b.time, b.index);
  };
  std::vector<Unit> mine;
  int64_t index = offset;
  for_each_entry(g, [&](int64_t k, int64_t s, int64_t d) {
    if (unit[k]) mine.push_back({entry_time(times, k), index++, std::min(s, d), std::max(s, d)});
  });
  if (static_cast<int64_t>(mine.size()) > held) {
    std::nth_element(mine.begin(), mine.begin() + held, mine.end(), later);
    mine.resize(static_cast<size_t>(held));
  }
  std::vector<Unit> all;
  for (const std::vector<Unit>& theirs : gather_ints(mine, comm))
    all.insert(all.end(), theirs.begin(), theirs.end());
  std::sort(all.begin(), all.end(), later);
  all.resize(static_cast<size_t>(held));
  std::reverse(all.begin(), all.end());  // ascending by (time, index): validation first
  TimePicks out;
  out.first = {all[0].time, all[0].index};
  out.first_test = {all[valid].time, all[valid].index};
  for (const Unit& u : all) {
    out.times.push_back(u.time);
    out.pairs.emplace_back(u.lo, u.hi);
  }
  std::sort(out.pairs.begin(), out.pairs.end());
  return out;
}

HeldOutEdges sampled_split(const ShardGraph& g, const EdgeSplitOptions& o, uint64_t seed,
                           DistComm& comm) {
  const int R = comm.size(), me = comm.rank();
  const Column* times = o.by == SplitBy::kTime ? time_column(g) : nullptr;
  PARTITA_CHECK(o.by != SplitBy::kTime || times != nullptr, Error,
                "internal: a split by time without edge times");
  // By time every copy of a pair is a unit (its own time). A random split draws over node
  // pairs (edge_split.h): with edge_time a pair repeated at different times is several
  // stored entries, adjacent in their row (rows are sorted by source); only the first of
  // each run keeps the unit mark, so a pair is one unit however many copies it has, and all
  // of them leave the graph with it (remove_held_out).
  std::vector<uint8_t> unit = unit_entries(g, comm);
  const graph::Csr& c = g.in_edges;
  for (int64_t i = 0; i < c.num_rows() && times == nullptr; ++i)
    for (int64_t k = c.indptr[i] + 1; k < c.indptr[i + 1]; ++k)
      if (c.indices[k] == c.indices[k - 1]) unit[k] = 0;
  const RankOffsets count =
      offsets_over_ranks({static_cast<int64_t>(std::count(unit.begin(), unit.end(), 1))}, comm);
  const int64_t offset = count.first[0], units = count.total[0];
  // The single-process checks, on global figures: every rank throws alike.
  auto held_count = [&](double fraction) {
    return std::max<int64_t>(1, std::llround(fraction * static_cast<double>(units)));
  };
  const int64_t valid = held_count(o.valid_fraction), test = held_count(o.test_fraction);
  PARTITA_CHECK_PARAM(valid + test < units, "edge_split",
                      "holding out {} + {} of the graph's {} edges (pairs) leaves none to train on",
                      valid, test, units);
  const int64_t n = g.num_nodes;
  const double non_edges =
      static_cast<double>(n) * static_cast<double>(n - 1) / 2 - static_cast<double>(units);
  PARTITA_CHECK_PARAM(static_cast<double>(valid + test) <= non_edges, "edge_split",
                      "{} negatives needed but the graph has only {} node pairs that are not edges",
                      valid + test, static_cast<int64_t>(non_edges));

  Rng rng(stream_key(seed, 0x6c696e6b /* "link" */));
  HeldOutEdges out;
  out.source = "sampled";
  out.fractions = o;
  const TimePicks timed =  // split by time only
      times != nullptr ? latest_units(g, unit, *times, offset, valid, valid + test, comm)
                       : TimePicks{};
  {
    const HeldPicks picks =
        times != nullptr ? HeldPicks{} : draw_held_units(units, valid, test, rng);
    size_t next = static_cast<size_t>(
        std::lower_bound(picks.picks.begin(), picks.picks.end(), offset) - picks.picks.begin());
    int64_t index = offset;
    for_each_entry(g, [&](int64_t k, int64_t s, int64_t d) {
      if (!unit[k]) return;
      int kind = kTrainSet;  // by time: one more for each threshold it reaches
      if (times != nullptr) {
        const Pair at(entry_time(*times, k), index);
        kind = (at >= timed.first ? 1 : 0) + (at >= timed.first_test ? 1 : 0);
      } else if (next < picks.picks.size() && picks.picks[next] == index) {
        kind = picks.role[next++] < valid ? kValidSet : kTestSet;
      }
      ++index;
      // An earlier copy of a held-out pair leaves the graph with it: not a training pair.
      if (times != nullptr && kind == kTrainSet &&
          std::binary_search(timed.pairs.begin(), timed.pairs.end(), Pair(std::minmax(s, d))))
        return;
      out.pairs[kind].insert(out.pairs[kind].end(), {s, d});
      if (times != nullptr) out.times[kind].push_back(entry_time(*times, k));
    });
  }
  // Negative k's time (split by time): the k-th held-out unit's in time order.
  const auto keep_negative = [&](int64_t k, int64_t a, int64_t b) {
    const int set = k < valid ? kValidNegSet : kTestNegSet;
    out.pairs[set].insert(out.pairs[set].end(), {a, b});
    if (times != nullptr) out.times[set].push_back(timed.times[k]);
  };

  const int64_t held = valid + test;
  if (negatives_by_enumeration(n, units, held)) {
    // Dense: every rank gathers the n x n bitmap of connected pairs {a < b}.
    const size_t words = static_cast<size_t>((n * n + 63) / 64);
    std::vector<int64_t> bits(words, 0);
    for_each_entry(g, [&](int64_t, int64_t s, int64_t d) {
      const int64_t x = std::min(s, d) * n + std::max(s, d);
      bits[static_cast<size_t>(x >> 6)] |= int64_t{1} << (x & 63);
    });
    for (const std::vector<int64_t>& theirs : gather_ints(bits, comm))
      for (size_t w = 0; w < words; ++w) bits[w] |= theirs[w];
    const std::vector<int64_t> negatives =
        draw_negatives_by_enumeration(n, held, rng, [&](int64_t a, int64_t b) {
          const int64_t x = a * n + b;
          return ((bits[static_cast<size_t>(x >> 6)] >> (x & 63)) & 1) != 0;
        });
    for (int64_t k = me; k < held; k += R) keep_negative(k, negatives[2 * k], negatives[2 * k + 1]);
    return out;
  }
  // Rejection: each rank answers for the rows it holds and the accepted pairs that hash to
  // it, and keeps negative k when k mod R is its rank.
  AcceptedPairs accepted([&](int64_t lo, int64_t hi) { return pair_owner(lo, hi, R) == me; });
  NegativeJudge judge;
  judge.rejected = [&](const std::vector<int64_t>& pairs) {
    std::vector<uint8_t> mine(pairs.size() / 2, 0);
    for (size_t j = 0; j < mine.size(); ++j) {
      const int64_t a = pairs[2 * j], b = pairs[2 * j + 1];
      if (a == b || row_has(g, b, a) || row_has(g, a, b)) mine[j] = 1;
    }
    accepted.flag_repeats(pairs, &mine);
    std::vector<int64_t> rejected(mine.begin(), mine.end());
    if (!rejected.empty()) comm.allreduce_max(rejected.data(), rejected.size());
    return std::vector<uint8_t>(rejected.begin(), rejected.end());
  };
  judge.accepted = [&](const std::vector<int64_t>& pairs, int64_t k) { accepted.add(pairs, k); };
  draw_negatives_by_rejection(n, held, rng, judge, [&](int64_t k, int64_t a, int64_t b) {
    if (k % R == me) keep_negative(k, a, b);
  });
  return out;
}

// The checks of dataset_edge_split, where the pairs meet: a negative must not be stored
// either way (asked of both endpoints' row owners), nor a held-out positive, nor repeat
// another; a training pair must not be held out (the unordered pair's hash owner).
HeldOutEdges dataset_split(const data::DatasetShard& shard, const ShardGraph& g, DistComm& comm) {
  const int R = comm.size();
  const data::EdgeSplitArrays& split = *shard.edge_split;
  HeldOutEdges out;
  out.source = "dataset";
  // kind: a HeldSet (0 train ... 4 test_neg); global rows from the shares.
  const std::vector<int64_t>* sets[kHeldSets] = {&split.train, &split.valid, &split.test,
                                                 &split.valid_neg, &split.test_neg};
  std::vector<int64_t> mine(kHeldSets);
  for (int kind = 0; kind < kHeldSets; ++kind) {
    out.pairs[kind] = *sets[kind];
    mine[kind] = static_cast<int64_t>(sets[kind]->size() / 2);
  }
  const std::vector<int64_t> first_row = offsets_over_ranks(mine, comm).first;

  const BlockOwner owner(g.num_nodes, R);
  // Messages of (kind, row, a, b).
  std::vector<std::vector<int64_t>> to_rows(static_cast<size_t>(R)),
      to_hash(static_cast<size_t>(R));
  for (int kind = 0; kind < kHeldSets; ++kind) {
    const std::vector<int64_t>& v = *sets[kind];
    for (size_t i = 0; i < v.size(); i += 2) {
      const int64_t row = first_row[kind] + static_cast<int64_t>(i / 2), a = v[i], b = v[i + 1];
      const auto send = [&](std::vector<int64_t>& to) { to.insert(to.end(), {kind, row, a, b}); };
      send(to_hash[pair_owner(a, b, R)]);
      if (kind < kValidNegSet) continue;
      send(to_rows[owner(b)]);
      if (owner(a) != owner(b)) send(to_rows[owner(a)]);
    }
  }
  const std::vector<std::vector<int64_t>> at_rows = send_ints(std::move(to_rows), comm);
  const std::vector<std::vector<int64_t>> at_hash = send_ints(std::move(to_hash), comm);
  agreed(comm, [&] {
    // m: a message (kind, row, a, b) breaking a rule.
    auto fail = [&](const int64_t* m, const char* what) {
      throw FormatError(fmt::format("{}/{}: row {}: ({}, {}) {}", shard.path,
                                    data::kEdgeSplitArrayFiles[m[0]], m[1], m[2], m[3], what));
    };
    for (const std::vector<int64_t>& m : at_rows)
      for (size_t i = 0; i < m.size(); i += 4) {
        const int64_t a = m[i + 2], b = m[i + 3];
        if (row_has(g, b, a) || row_has(g, a, b)) fail(&m[i], "is an edge, not a negative");
      }
    // (unordered pair, message), sorted by the pair, kind and row: in each group of equal
    // pairs the training rows first, the positives, then the negatives in file order.
    std::vector<std::pair<Pair, const int64_t*>> all;
    for (const std::vector<int64_t>& m : at_hash)
      for (size_t i = 0; i < m.size(); i += 4)
        all.emplace_back(std::minmax(m[i + 2], m[i + 3]), &m[i]);
    std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) {
      return std::tie(x.first, x.second[0], x.second[1]) <
             std::tie(y.first, y.second[0], y.second[1]);
    });
    for (size_t i = 0; i < all.size();) {
      size_t j = i;
      bool positive = false, negative = false;
      for (; j < all.size() && all[j].first == all[i].first; ++j) {
        const int64_t kind = all[j].second[0];
        if (kind == kValidSet || kind == kTestSet) positive = true;
        if (kind < kValidNegSet) continue;
        if (positive) fail(all[j].second, "is an edge, not a negative");
        if (negative) fail(all[j].second, "repeats an earlier negative pair");
        negative = true;
      }
      if (positive)
        for (size_t k = i; k < j && all[k].second[0] == kTrainSet; ++k)
          fail(all[k].second, "is also a valid or test edge");
      i = j;
    }
  });
  return out;
}

// Pairs (new ids) moved to the writer of the part owning their first (`by_src`) or second
// element; per part this rank writes, sorted by that element then the other (then the time),
// repeats dropped when `unique`. `times`: null, or one per pair (a split by time), which
// travel with their pairs. Returns part -> pairs (interleaved, in stored order src, dst) and
// part -> their times (empty without times).
struct PartPairs {
  std::map<int, std::vector<int64_t>> pairs, times;
};

PartPairs to_part_writers(const std::vector<int64_t>& pairs, const std::vector<int64_t>* times,
                          const PartLayout& layout, bool by_src, bool unique, DistComm& comm) {
  const int R = comm.size(), P = layout.num_parts();
  const size_t width = times != nullptr ? 4 : 3;
  std::vector<std::vector<int64_t>> send(static_cast<size_t>(R));
  for (size_t i = 0; i < pairs.size(); i += 2) {  // sent in sort order: owner's element first
    const int64_t a = pairs[by_src ? i : i + 1], b = pairs[by_src ? i + 1 : i];
    const int p = layout.owner_part(a);
    std::vector<int64_t>& to = send[layout.writer(p)];
    to.insert(to.end(), {p, a, b});
    if (times != nullptr) to.push_back((*times)[i / 2]);
  }
  using Keyed = std::pair<Pair, int64_t>;  // (sort pair, time: 0 without times)
  std::map<int, std::vector<Keyed>> keyed;
  for (int p = comm.rank(); p < P; p += R) keyed[p];
  for (const std::vector<int64_t>& m : send_ints(std::move(send), comm))
    for (size_t i = 0; i < m.size(); i += width)
      keyed[static_cast<int>(m[i])].push_back({{m[i + 1], m[i + 2]}, width == 4 ? m[i + 3] : 0});
  PartPairs out;
  for (auto& [p, v] : keyed) {
    std::sort(v.begin(), v.end());
    if (unique) v.erase(std::unique(v.begin(), v.end()), v.end());
    std::vector<int64_t>& flat = out.pairs[p];
    std::vector<int64_t>& t = out.times[p];
    for (const auto& [pair, time] : v) {
      flat.insert(flat.end(),
                  {by_src ? pair.first : pair.second, by_src ? pair.second : pair.first});
      if (times != nullptr) t.push_back(time);
    }
  }
  return out;
}

// One int64 file of `shape` ([rows, 2] pairs, or [rows] times) that several ranks fill. Rank
// 0 creates and finishes it, each rank writes its pieces (piece k from row first[k]).
void write_shared_rows(const std::string& out_dir, const std::string& rel,
                       const std::vector<int64_t>& shape,
                       const std::map<int, std::vector<int64_t>>& pieces,
                       const std::vector<int64_t>& first, DistComm& comm,
                       std::vector<FileEntry>* files) {
  const std::string path = out_dir + "/" + rel;
  const bool lead = comm.rank() == 0;
  const int64_t width = shape.size() > 1 ? shape[1] : 1;
  std::optional<NpyFileAt> file;
  agreed(comm, [&] {
    if (lead) file.emplace(NpyFileAt::create(path, DType::kInt64, shape));
  });
  agreed(comm, [&] {
    const bool any = std::any_of(pieces.begin(), pieces.end(),
                                 [](const auto& piece) { return !piece.second.empty(); });
    if (!lead && any) file.emplace(NpyFileAt::attach(path, DType::kInt64, shape));
    for (const auto& [k, v] : pieces)
      if (!v.empty()) file->write_at(width * first[k] * 8, v.data(), v.size() * 8);
    if (!lead && file) file->close();
  });
  agreed(comm, [&] {
    if (lead) files->push_back({rel, DType::kInt64, shape, file->finish()});
  });
}

}  // namespace

EdgeSplitOptions parse_edge_split(const std::string& text) {
  const size_t comma = text.find(',');
  PARTITA_CHECK_PARAM(comma != std::string::npos && text.find(',', comma + 1) == std::string::npos,
                      "edge_split", "'{}' is not a list VALID,TEST of two fractions", text);
  EdgeSplitOptions o;
  o.valid_fraction = parse_fraction(text.substr(0, comma), text);
  o.test_fraction = parse_fraction(text.substr(comma + 1), text);
  PARTITA_CHECK_PARAM(o.valid_fraction + o.test_fraction < 1, "edge_split",
                      "fractions {} sum to 1 or more; no edge would be left to train on", text);
  return o;
}

std::optional<HeldOutEdges> make_edge_split(const PartitionInput& input,
                                            const PartitionOptions& options, DistComm& comm) {
  const data::DatasetShard& shard = input.shard;
  const ShardGraph& graph = input.graph;
  if (!options.edge_split.enabled() && !shard.edge_split) return std::nullopt;
  PARTITA_CHECK_PARAM(!shard.hetero, "edge_split",
                      "link-prediction splits need a homogeneous dataset; {} is heterogeneous",
                      shard.path);
  PARTITA_CHECK_PARAM(!(options.edge_split.enabled() && shard.edge_split), "edge_split",
                      "{} has its own edge split (train_edges.npy ...); drop `edge_split` or the "
                      "files",
                      shard.path);
  const EdgeSplitOptions& f = options.edge_split;
  PARTITA_CHECK_PARAM(f.by != SplitBy::kTime || time_column(graph) != nullptr, "edge_split_by",
                      "time: {} has no edge_time (edges without times); split at random or "
                      "give the dataset edge_time.npy",
                      shard.path);
  PARTITA_CHECK_PARAM(
      !f.enabled() || (f.valid_fraction > 0 && f.valid_fraction < 1 && f.test_fraction > 0 &&
                       f.test_fraction < 1 && f.valid_fraction + f.test_fraction < 1),
      "edge_split", "fractions {},{} must each lie in (0, 1) and sum to less than 1",
      f.valid_fraction, f.test_fraction);
  if (shard.edge_split) return dataset_split(shard, graph, comm);
  return sampled_split(graph, options.edge_split, options.seed, comm);
}

void remove_held_out(ShardGraph& g, const HeldOutEdges& held, DistComm& comm) {
  const int R = comm.size();
  const BlockOwner owner(g.num_nodes, R);
  // (row, source) to drop, both directions of every held-out pair, sent to the row's owner.
  std::vector<std::vector<int64_t>> send(static_cast<size_t>(R));
  for (const std::vector<int64_t>* v : {&held.pairs[kValidSet], &held.pairs[kTestSet]})
    for (size_t i = 0; i < v->size(); i += 2) {
      const int64_t u = (*v)[i], w = (*v)[i + 1];
      send[owner(w)].insert(send[owner(w)].end(), {w, u});
      send[owner(u)].insert(send[owner(u)].end(), {u, w});
    }
  std::vector<Pair> drop;
  for (const std::vector<int64_t>& m : send_ints(std::move(send), comm))
    for (size_t i = 0; i < m.size(); i += 2) drop.emplace_back(m[i], m[i + 1]);
  std::sort(drop.begin(), drop.end());
  graph::Csr& c = g.in_edges;
  std::vector<int64_t> indptr(c.indptr.size(), 0);
  int64_t kept = 0;
  auto it = drop.begin();
  for (int64_t i = 0; i < c.num_rows(); ++i) {
    const int64_t d = g.node_begin + i;
    for (int64_t k = c.indptr[i]; k < c.indptr[i + 1]; ++k) {
      const Pair e{d, c.indices[k]};
      while (it != drop.end() && *it < e) ++it;
      if (it != drop.end() && *it == e) continue;
      for (Column& col : g.edge_columns) {  // the entry's values follow it
        const size_t w = col.width();
        std::memmove(col.values.data() + kept * w, col.values.data() + k * w, w);
      }
      c.indices[kept++] = c.indices[k];
    }
    indptr[i + 1] = kept;
  }
  c.indices.resize(static_cast<size_t>(kept));
  c.indices.shrink_to_fit();
  for (Column& col : g.edge_columns) col.values.resize(kept * col.width());
  c.indptr = std::move(indptr);
  g.num_edges_total = sum_over_ranks({kept}, comm)[0];
}

EdgeSplitStats write_edge_split(const HeldOutEdges& held, const PartLayout& layout,
                                const std::string& out_dir, DistComm& comm, int threads,
                                std::vector<FileEntry>* files) {
  const int P = layout.num_parts();
  agreed(comm, [&] { create_directory(out_dir + "/edges"); });
  EdgeSplitStats stats;
  stats.source = held.source;
  stats.valid_fraction = held.fractions.valid_fraction;
  stats.test_fraction = held.fractions.test_fraction;
  const HeldSet set_of[] = {kValidSet, kValidNegSet, kTestSet, kTestNegSet};  // file order
  stats.by_time = held.fractions.by == SplitBy::kTime;
  // Interleaved pairs in new ids, a failure agreed.
  const auto map_pairs = [&](const std::vector<int64_t>& pairs) {
    RankFailure failure(comm);
    std::vector<int64_t> out = map_sources(pairs.data(), static_cast<int64_t>(pairs.size()), layout,
                                           comm, threads, failure);
    failure.agree();
    return out;
  };
  for (size_t s = 0; s < 4; ++s) {
    std::vector<int64_t> pairs = map_pairs(held.pairs[set_of[s]]);
    // The file in pieces of one rank each: sampled, part by part, sorted by (src, dst) (then
    // time; parts own contiguous new ids); the dataset's in its order, rank by rank.
    const bool sampled = held.source == "sampled";
    const PartPairs mine =
        sampled ? to_part_writers(pairs, stats.by_time ? &held.times[set_of[s]] : nullptr, layout,
                                  /*by_src=*/true, /*unique=*/false, comm)
                : PartPairs{{{comm.rank(), std::move(pairs)}}, {}};
    std::vector<int64_t> piece_rows(static_cast<size_t>(sampled ? P : comm.size()), 0);
    for (const auto& [k, v] : mine.pairs) piece_rows[k] = static_cast<int64_t>(v.size() / 2);
    piece_rows = sum_over_ranks(std::move(piece_rows), comm);
    int64_t& rows = stats.*kEdgeSplitCounts[s].second;
    for (int64_t& n : piece_rows) rows += std::exchange(n, rows);  // n: the piece's first row
    write_shared_rows(out_dir, kEdgeSplitFiles[s], {rows, 2}, mine.pairs, piece_rows, comm, files);
    if (stats.by_time)
      write_shared_rows(out_dir, kEdgeSplitTimeFiles[s], {rows}, mine.times, piece_rows, comm,
                        files);
  }
  // Training pairs: each part's, by (dst, src) (then time), repeats dropped (a dataset's file
  // may repeat; by time, a pair repeats once per time).
  const PartPairs mine = to_part_writers(map_pairs(held.pairs[kTrainSet]),
                                         stats.by_time ? &held.times[kTrainSet] : nullptr, layout,
                                         /*by_src=*/false, /*unique=*/true, comm);
  stats.train_per_part.assign(static_cast<size_t>(P), 0);
  agreed(comm, [&] {
    const auto write = [&](int p, const char* name, const std::vector<int64_t>& values,
                           const std::vector<int64_t>& shape) {
      const std::string rel = part_file(p, name);
      files->push_back(
          {rel, DType::kInt64, shape, write_npy<int64_t>(out_dir + "/" + rel, values, shape)});
    };
    for (const auto& [p, v] : mine.pairs) {
      const int64_t rows = static_cast<int64_t>(v.size() / 2);
      write(p, kTrainEdgesName, v, {rows, 2});
      stats.train_per_part[p] = rows;
      if (stats.by_time) write(p, kTrainEdgeTimeName, mine.times.at(p), {rows});
    }
  });
  comm.allreduce_sum(stats.train_per_part.data(), stats.train_per_part.size());
  return stats;
}

}  // namespace partita::partition
