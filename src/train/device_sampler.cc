// DeviceSampler: see partita/train/device_sampler.h. One hop, for a frontier of n nodes on a
// graph of R relations (R = 1 untyped): its S = n * R runs ("segments", node-major) each take
// count = all of their d entries when k < 0 or d <= k, else k of them by Floyd's algorithm
// (k: the segment's fanout). Slots [S, W] (W: the largest fanout) hold the picks, in stored
// order, where slot < count; the hop then dedups the picked ids against the frontier and
// among themselves in one stable sort, reads its sizes once, and compacts.
//
// Temporal: every entry of the frontier's runs is a slot (one host read for their total),
// filtered by time; uniform draws Floyd's positions among a run's allowed entries (d = m,
// their count), looked up in the allowed entries laid out segment by segment; recent ranks
// the allowed entries of a run by time (latest first, then stored order), as weighted ranks
// by key; temporal and weighted keys the allowed entries only. Relabelling dedups (node,
// time) pairs.
#include "partita/train/device_sampler.h"

#include <ATen/record_function.h>
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <tuple>

#include "device_blocks.h"
#include "device_random.h"
#include "partita/core/error.h"

namespace partita::train {
namespace {

namespace dr = device_random;

// Marks an empty slot; sorts after every node id.
constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

// The hop's small sizes on the host: one device-to-host copy (the only kind of sync here).
std::vector<int64_t> host_read(const std::vector<torch::Tensor>& scalars, int* reads) {
  RECORD_USER_SCOPE(kHostReadScope);
  const torch::Tensor host = torch::stack(scalars).to(torch::kCPU);
  ++*reads;
  return std::vector<int64_t>(host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel());
}

// Weighted (DeviceSampleOptions::weighted): every segment's entries are slots, keyed as
// Efraimidis-Spirakis keys them, and the smallest keys of each segment are its picks.

// Floyd's algorithm (neighbor_kernel.h) for every segment at once, for segments with
// k < d (others get garbage, never read): [S, width] positions, the first k of each row in
// increasing order. Column c is Floyd's step c: j = d - k + c, t = below(j + 1) from the
// segment's draw c; it takes j when t was taken already, else t. "Taken already" (t_c in
// the set after steps 0..c-1) holds exactly when some earlier step drew the same t, or
// t = j_i for the step i = t - (d - k) < c and step i took its j_i (by the same rule):
// duplicates come from one stable sort per row, the chains of j's by pointer jumping.
torch::Tensor floyd_positions(const torch::Tensor& key, const torch::Tensor& d,
                              const torch::Tensor& k, int64_t width) {
  const int64_t S = key.size(0);
  const auto i64 = key.options();
  const torch::Tensor col = torch::arange(width, i64).unsqueeze(0);  // [1, W]
  const torch::Tensor base = (d - k).unsqueeze(1);                   // [S, 1]: d - k
  const torch::Tensor j = base + col;                                // [S, W]
  const torch::Tensor t = dr::below(dr::draw(key.unsqueeze(1), col), (j + 1).clamp_min_(1));
  // dup[c]: an earlier step drew t[c] too (stable sort: the first of equals is the earliest).
  const auto sorted = torch::sort(t, c10::optional<bool>(true), /*dim=*/1);
  const torch::Tensor& values = std::get<0>(sorted);
  const auto flags = i64.dtype(torch::kBool);
  torch::Tensor later = torch::zeros({S, width}, flags);
  if (width > 1) later.slice(1, 1).copy_(values.slice(1, 1).eq(values.slice(1, 0, width - 1)));
  // Column `width` is a sink: never taken, pointing at itself.
  torch::Tensor taken =
      torch::cat({torch::zeros({S, width}, flags).scatter_(1, std::get<1>(sorted), later),
                  torch::zeros({S, 1}, flags)},
                 1);
  const torch::Tensor step = t - base;  // the step whose j equals t, if in [0, c)
  torch::Tensor next =
      torch::where(step.ge(0).logical_and_(step.lt(col)), step, torch::full_like(step, width));
  next = torch::cat({next, torch::full({S, 1}, width, i64)}, 1);
  for (int64_t span = 1; span < width; span *= 2) {  // each round doubles the chain covered
    taken.logical_or_(taken.gather(1, next));
    next = next.gather(1, next);
  }
  torch::Tensor pos = torch::where(taken.slice(1, 0, width), j, t);
  pos.masked_fill_(col.ge(k.unsqueeze(1)), kNone);  // steps past k: sorted to the end
  return std::get<0>(pos.sort(1));
}

// The picks of one hop, before dedup.
struct Picks {
  torch::Tensor count;     // [S] picks per segment
  torch::Tensor segment;   // [M] each slot's segment
  torch::Tensor slot;      // [M] its place among the segment's picks
  torch::Tensor valid;     // [M] bool: holds a pick (undefined: every slot does)
  torch::Tensor neighbor;  // [M] the picked global id, kNone where not valid
  torch::Tensor entry;     // [M] the pick's position in the topology's indices (0: not valid)
};

// Every entry of every segment of a temporal hop, one slot each, and which the time allows.
struct Entries {
  int64_t total = 0;
  torch::Tensor segment;  // [total] each slot's segment
  torch::Tensor first;    // [S] each segment's first slot
  torch::Tensor at;       // [total] 0, 1, ...
  torch::Tensor entry;    // [total] its position in the topology's indices
  torch::Tensor allowed;  // [total] bool: its time is <= (strict: <) its segment's
  torch::Tensor m;        // [S] allowed entries per segment
};

class HopSampler {
 public:
  HopSampler(const DeviceTopology& topology, const DeviceSampleOptions& options, int* reads)
      : topo_(topology),
        weighted_(options.weighted),
        temporal_(options.temporal),
        strict_(options.strict),
        reads_(reads) {}

  // Per-segment fanouts of the hop: fanouts[r] for relation r (one entry when untyped).
  // `times`: temporal, the frontier entries' times.
  Picks pick(const torch::Tensor& nodes, const torch::Tensor& times, uint64_t hop_key,
             const std::vector<int64_t>& fanouts) const {
    const auto i64 = nodes.options();
    const int64_t R = topo_.num_relations();
    const int64_t n = nodes.size(0);
    const int64_t S = n * R;
    const torch::Tensor rel = torch::arange(R, i64);
    const torch::Tensor run = (nodes.unsqueeze(1) * R + rel).reshape({S});
    torch::Tensor start = topo_.run_ptr().index_select(0, run);
    torch::Tensor d = topo_.run_ptr().index_select(0, run + 1) - start;
    bool every = false;
    int64_t width = 0;
    for (int64_t f : fanouts) {
      every = every || f < 0;
      width = std::max(width, f);
    }
    torch::Tensor k;
    if (std::all_of(fanouts.begin(), fanouts.end(), [&](int64_t f) { return f == fanouts[0]; })) {
      k = torch::full({S}, fanouts[0], i64);
    } else {
      k = torch::empty({R}, i64);
      for (int64_t r = 0; r < R; ++r) k[r].fill_(fanouts[static_cast<size_t>(r)]);
      k = k.repeat({n});
    }
    const bool temporal = temporal_ != sample::Temporal::kNone;
    if (weighted_)
      return pick_weighted(nodes, hop_key, temporal ? filter(times, start, d) : slots(start, d), k);
    // Temporal uniform: segment g's j-th allowed entry is table[start[g] + j].
    torch::Tensor table;
    if (temporal) {
      const Entries e = filter(times, start, d);
      if (temporal_ == sample::Temporal::kRecent) return pick_recent(e, k);
      d = e.m;
      start = d.cumsum(0) - d;
      table = torch::zeros({e.total + 1}, i64)
                  .index_copy_(0,
                               torch::where(e.allowed, e.allowed.cumsum(0).sub_(1),
                                            torch::full_like(e.at, e.total)),
                               e.entry);
    }
    const torch::Tensor whole = k.lt(0).logical_or_(d.le(k));  // take every entry
    Picks p;
    p.count = torch::where(whole, d, k);
    // Floyd's positions where some segment draws.
    torch::Tensor floyd;
    if (width > 0) {
      torch::Tensor key = dr::stream_key(hop_key, topo_.stream_ids().index_select(0, nodes));
      if (topo_.typed()) key = dr::stream_key(key.unsqueeze(1), rel).reshape({S});
      floyd = floyd_positions(key, d, k, width);
    }
    torch::Tensor pos;
    if (!every) {
      // Slots [S, width]: slot c of a segment is valid below its count.
      const torch::Tensor col = torch::arange(width, i64).unsqueeze(0);
      p.valid = col.lt(p.count.unsqueeze(1)).reshape({-1});
      p.segment = torch::arange(S, i64).unsqueeze(1).expand({S, width}).reshape({-1});
      p.slot = col.expand({S, width}).reshape({-1});
      pos = width > 0 ? torch::where(whole.unsqueeze(1), col, floyd).reshape({-1}) : p.slot;
    } else {
      // A fanout of -1: as many slots as picks, which takes a host read.
      const int64_t total = host_read({p.count.sum()}, reads_)[0];
      p.segment = torch::arange(S, i64).repeat_interleave(p.count, /*dim=*/0, total);
      const torch::Tensor first = p.count.cumsum(0) - p.count;
      p.slot = torch::arange(total, i64) - first.index_select(0, p.segment);
      pos = p.slot;
      if (width > 0) {
        const torch::Tensor drawn = floyd.index({p.segment, p.slot.clamp_max(width - 1)});
        pos = torch::where(whole.index_select(0, p.segment), p.slot, drawn);
      }
    }
    torch::Tensor entry = start.index_select(0, p.segment) + pos;
    if (p.valid.defined()) entry.masked_fill_(p.valid.logical_not(), 0);
    if (table.defined()) entry = table.index_select(0, entry);
    p.neighbor = topo_.indices().index_select(0, entry).to(torch::kInt64);
    if (p.valid.defined()) p.neighbor.masked_fill_(p.valid.logical_not(), kNone);
    p.entry = std::move(entry);
    return p;
  }

 private:
  // The slots of every entry of the segments (a host read: their total); `allowed` and `m`
  // stay undefined.
  Entries slots(const torch::Tensor& start, const torch::Tensor& d) const {
    const auto i64 = d.options();
    const int64_t S = d.size(0);
    Entries e;
    e.total = host_read({d.sum()}, reads_)[0];
    e.segment = torch::arange(S, i64).repeat_interleave(d, /*dim=*/0, e.total);
    e.first = d.cumsum(0) - d;
    e.at = torch::arange(e.total, i64);
    e.entry = start.index_select(0, e.segment) + e.at - e.first.index_select(0, e.segment);
    return e;
  }

  // slots(), each allowed when its time is <= (strict: <) its frontier entry's time.
  Entries filter(const torch::Tensor& times, const torch::Tensor& start,
                 const torch::Tensor& d) const {
    const auto i64 = d.options();
    const int64_t S = d.size(0);
    const int64_t R = topo_.num_relations();
    Entries e = slots(start, d);
    const torch::Tensor limit =
        times.index_select(0, R == 1 ? e.segment : e.segment.div(R, "trunc"));
    const torch::Tensor t = topo_.times().index_select(0, e.entry);
    e.allowed = strict_ ? t.lt(limit) : t.le(limit);
    e.m = torch::zeros({S}, i64).index_add_(0, e.segment, e.allowed.to(torch::kInt64));
    return e;
  }

  // Recent: a segment's allowed entries ranked latest first (ties: the earlier entry), the
  // count = min(k, m) first picked (every allowed one for k < 0), in stored order.
  Picks pick_recent(const Entries& e, const torch::Tensor& k) const {
    const auto i64 = k.options();
    // ~time orders latest first without overflow; then by segment, allowed entries first.
    const c10::optional<bool> stable(true);
    const torch::Tensor later = topo_.times().index_select(0, e.entry).bitwise_not();
    const torch::Tensor by_time = std::get<1>(torch::sort(later, stable, /*dim=*/0));
    const torch::Tensor group = e.segment.mul(2).add_(e.allowed.logical_not().to(torch::kInt64));
    const torch::Tensor by_segment =
        std::get<1>(torch::sort(group.index_select(0, by_time), stable, /*dim=*/0));
    const torch::Tensor order = by_time.index_select(0, by_segment);
    const torch::Tensor rank =
        torch::empty({e.total}, i64)
            .index_copy_(0, order,
                         e.at - e.first.index_select(0, e.segment.index_select(0, order)));
    Picks p;
    p.segment = e.segment;
    p.entry = e.entry;
    p.count = torch::where(k.lt(0), e.m, torch::minimum(k, e.m));
    p.valid = rank.lt(p.count.index_select(0, p.segment));  // only allowed entries rank so
    const torch::Tensor before = p.count.cumsum(0) - p.count;
    p.slot = p.valid.to(torch::kInt64).cumsum(0).sub_(1).sub_(before.index_select(0, p.segment));
    p.neighbor = topo_.indices().index_select(0, p.entry).to(torch::kInt64);
    p.neighbor.masked_fill_(p.valid.logical_not(), kNone);
    return p;
  }

  // Efraimidis-Spirakis for every segment, over the slots `e` (temporal: those with `allowed`
  // only, as the host weighs the run filtered by time): entry i of a segment keyed
  // -log(u_i) / w_i with u_i from the segment's draw i (temporal: i counts the allowed
  // entries only; positive weights, others never picked), the count = min(k, positive
  // entries) smallest keys picked (every positive one for k < 0), in stored order.
  Picks pick_weighted(const torch::Tensor& nodes, uint64_t hop_key, const Entries& e,
                      const torch::Tensor& k) const {
    const auto i64 = nodes.options();
    const int64_t S = k.size(0);
    const int64_t R = topo_.num_relations();
    const int64_t total = e.total;
    Picks p;
    p.segment = e.segment;
    p.entry = e.entry;
    const torch::Tensor pos = e.at - e.first.index_select(0, p.segment);
    const torch::Tensor w = topo_.weights().index_select(0, p.entry);
    // Positive: > 0 and finite (not NaN), as the host kernel's rule; temporal: and allowed.
    torch::Tensor positive = w.gt(0).logical_and_(w.le(std::numeric_limits<float>::max()));
    torch::Tensor draw = pos;
    if (e.allowed.defined()) {
      positive.logical_and_(e.allowed);
      // The host draws over the filtered run: an allowed entry's draw is its place among
      // the segment's allowed entries (others' are garbage, never used).
      draw = e.allowed.to(torch::kInt64)
                 .cumsum(0)
                 .sub_(1)
                 .sub_((e.m.cumsum(0) - e.m).index_select(0, p.segment));
    }
    torch::Tensor key = dr::stream_key(hop_key, topo_.stream_ids().index_select(0, nodes));
    if (topo_.typed()) key = dr::stream_key(key.unsqueeze(1), torch::arange(R, i64)).reshape({S});
    const torch::Tensor u = dr::open_unit(dr::draw(key.index_select(0, p.segment), draw));
    const torch::Tensor keys =
        torch::where(positive, u.log().neg_().div_(w.to(torch::kFloat64)),
                     torch::full({total}, std::numeric_limits<double>::infinity(), u.options()));
    // Each slot's rank by key inside its segment: a stable sort by key, then a stable sort
    // of that order by segment (ties: the earlier entry first).
    const c10::optional<bool> stable(true);
    const torch::Tensor by_key = std::get<1>(torch::sort(keys, stable, /*dim=*/0));
    const torch::Tensor by_segment =
        std::get<1>(torch::sort(p.segment.index_select(0, by_key), stable, /*dim=*/0));
    const torch::Tensor order = by_key.index_select(0, by_segment);
    const torch::Tensor rank =
        torch::empty({total}, i64)
            .index_copy_(0, order,
                         e.at - e.first.index_select(0, p.segment.index_select(0, order)));
    const torch::Tensor positives =
        torch::zeros({S}, i64).index_add_(0, p.segment, positive.to(torch::kInt64));
    p.count = torch::where(k.lt(0), positives, torch::minimum(k, positives));
    p.valid = rank.lt(p.count.index_select(0, p.segment));
    // A pick's slot: the picks of its segment before it.
    const torch::Tensor before = p.count.cumsum(0) - p.count;
    p.slot = p.valid.to(torch::kInt64).cumsum(0).sub_(1).sub_(before.index_select(0, p.segment));
    p.neighbor = topo_.indices().index_select(0, p.entry).to(torch::kInt64);
    p.neighbor.masked_fill_(p.valid.logical_not(), kNone);
    return p;
  }

  const DeviceTopology& topo_;
  bool weighted_;
  sample::Temporal temporal_;
  bool strict_;
  int* reads_;
};

// Local ids of `all` = [frontier (distinct), picks (kNone: no pick)] by first appearance,
// as sample::NodeRelabeler numbers them; sizes not known yet (the caller reads `distinct`).
// Temporal (`times` defined, aligned with `all`): of (node, time) pairs, as
// sample::BlockBuilder numbers them.
struct Relabeled {
  torch::Tensor local;     // [T] local id of each entry (garbage for kNone)
  torch::Tensor nodes;     // [T + 1]: the distinct ids in order in [0, distinct), then garbage
  torch::Tensor distinct;  // scalar: how many distinct ids
  torch::Tensor times;     // temporal: [T + 1], the distinct entries' times as `nodes`
};

Relabeled relabel(const torch::Tensor& all, const torch::Tensor& times) {
  const int64_t T = all.size(0);
  const auto i64 = all.options();
  const c10::optional<bool> stable(true);
  torch::Tensor values, perm;
  if (!times.defined()) {
    std::tie(values, perm) = torch::sort(all, stable, /*dim=*/0);
  } else {  // by (node, time): a stable sort by time, then one by node
    const torch::Tensor by_time = std::get<1>(torch::sort(times, stable, /*dim=*/0));
    const auto by_node = torch::sort(all.index_select(0, by_time), stable, /*dim=*/0);
    values = std::get<0>(by_node);
    perm = by_time.index_select(0, std::get<1>(by_node));
  }
  torch::Tensor starts = torch::ones({T}, i64.dtype(torch::kBool));  // a new value begins
  if (T > 1) starts.slice(0, 1).copy_(values.slice(0, 1).ne(values.slice(0, 0, T - 1)));
  if (T > 1 && times.defined()) {
    const torch::Tensor t = times.index_select(0, perm);
    starts.slice(0, 1).logical_or_(t.slice(0, 1).ne(t.slice(0, 0, T - 1)));
  }
  const torch::Tensor group = starts.cumsum(0).sub_(1);
  // Stable: a group's first sorted entry is its first appearance.
  const torch::Tensor first_of_group =
      torch::zeros({T + 1}, i64)
          .scatter_(0, torch::where(starts, group, torch::full_like(group, T)), perm);
  const torch::Tensor appears = starts.logical_and(values.ne(kNone));
  const torch::Tensor is_first =
      torch::zeros({T}, i64.dtype(torch::kBool)).scatter_(0, perm, appears);
  const torch::Tensor id_at = is_first.cumsum(0).sub_(1);  // local id of a first appearance
  const torch::Tensor local_sorted = id_at.index_select(0, first_of_group.index_select(0, group));
  Relabeled r;
  r.local = torch::empty({T}, i64).scatter_(0, perm, local_sorted);
  r.nodes = torch::empty({T + 1}, i64)
                .index_copy_(0, torch::where(is_first, id_at, torch::full_like(id_at, T)), all);
  if (times.defined())
    r.times = torch::empty({T + 1}, i64)
                  .index_copy_(0, torch::where(is_first, id_at, torch::full_like(id_at, T)), times);
  r.distinct = is_first.sum();
  return r;
}

void check_fanouts(const sample::Fanouts& fanouts, int64_t relations) {
  PARTITA_CHECK(!fanouts.per_relation() || fanouts.relations.size() == fanouts.num_hops(), Error,
                "sample: relation fanouts are given for {} hops, fanouts for {}",
                fanouts.relations.size(), fanouts.num_hops());
  for (size_t hop = 0; hop < fanouts.num_hops(); ++hop) {
    PARTITA_CHECK(fanouts.hops[hop] >= -1, Error,
                  "sample: fanout {} of hop {} is invalid (use k >= 0, or -1 for all)",
                  fanouts.hops[hop], hop);
    const std::vector<int64_t>& per = fanouts.relations_of(hop);
    PARTITA_CHECK(per.empty() || static_cast<int64_t>(per.size()) == relations, Error,
                  "sample: hop {} gives fanouts for {} relations, the graph has {}", hop,
                  per.size(), relations);
    for (int64_t f : per)
      PARTITA_CHECK(f >= -1, Error, "sample: fanout {} of a relation at hop {} is invalid", f, hop);
  }
}

}  // namespace

DeviceSample DeviceSampler::sample(const torch::Tensor& seeds, const sample::BlockOptions& options,
                                   const DeviceSampleOptions& sample_options) const {
  RECORD_USER_SCOPE("partita::device_sample");
  const DeviceTopology& topo = topology_;
  const int64_t R = topo.num_relations();
  check_fanouts(options.fanouts, R);
  PARTITA_CHECK(
      seeds.device() == topo.device() && seeds.scalar_type() == torch::kInt64 && seeds.dim() == 1,
      Error, "internal: device sampler seeds must be int64 [n] on {}", topo.device().str());
  PARTITA_CHECK(!sample_options.weighted || topo.weighted(), Error,
                "internal: weighted device sampling on a topology without edge weights");
  const bool temporal = sample_options.temporal != sample::Temporal::kNone;
  PARTITA_CHECK(!temporal || topo.timed(), Error,
                "internal: temporal device sampling on a topology without edge times");
  PARTITA_CHECK(!sample_options.weighted || sample_options.temporal != sample::Temporal::kRecent,
                Error, "internal: recent temporal device sampling has no draw to weight");
  PARTITA_CHECK(!temporal || (sample_options.seed_times.defined() &&
                              sample_options.seed_times.device() == topo.device() &&
                              sample_options.seed_times.scalar_type() == torch::kInt64 &&
                              sample_options.seed_times.sizes() == seeds.sizes()),
                Error, "internal: temporal device sampling needs int64 seed times, one per seed");
  DeviceSample out;
  HopSampler sampler(topo, sample_options, &out.host_reads);
  torch::Tensor nodes = seeds;
  torch::Tensor times = temporal ? sample_options.seed_times : torch::Tensor();
  std::vector<torch::Tensor> edge_ids;  // per hop, with sample_options.edge_ids
  for (size_t hop = 0; hop < options.fanouts.num_hops(); ++hop) {
    std::vector<int64_t> fanouts = options.fanouts.relations_of(hop);
    if (fanouts.empty()) fanouts.assign(static_cast<size_t>(R), options.fanouts.hops[hop]);
    const int64_t n = nodes.size(0);
    const Picks p =
        sampler.pick(nodes, times, sample::hop_key(options.key, static_cast<int>(hop)), fanouts);
    // Temporal: each pick at the time of the entry it was drawn for.
    const Relabeled r = relabel(
        torch::cat({nodes, p.neighbor}),
        temporal ? torch::cat({times, times.index_select(
                                          0, R == 1 ? p.segment : p.segment.div(R, "trunc"))})
                 : torch::Tensor());
    // The sizes, in one read: edges, distinct nodes (and typed: relation rows, relations).
    std::vector<torch::Tensor> sizes{p.count.sum(), r.distinct};
    torch::Tensor run_counts;
    if (topo.typed()) {
      run_counts = p.count.view({n, R});
      const torch::Tensor used = run_counts.gt(0);
      const torch::Tensor top = torch::where(used.any(0), torch::arange(1, R + 1, nodes.options()),
                                             torch::zeros({R}, nodes.options()));
      sizes.push_back(used.sum());
      sizes.push_back(top.max());
    }
    const std::vector<int64_t> host = host_read(sizes, &out.host_reads);
    const int64_t edges = host[0];
    DeviceCsc csc;
    csc.num_dst = n;
    csc.num_src = host[1];
    csc.indptr =
        torch::cat({torch::zeros({1}, nodes.options()), p.count.view({n, R}).sum(1).cumsum(0)});
    // Slot s of segment g holds edge first[g] + s: slots are (node, relation, place) ordered.
    const torch::Tensor first = p.count.cumsum(0) - p.count;
    const torch::Tensor edge = first.index_select(0, p.segment) + p.slot;
    const torch::Tensor local = r.local.slice(0, n);
    auto place = [&](const torch::Tensor& values) {
      if (!p.valid.defined()) return values;  // every slot is an edge, in edge order
      const torch::Tensor to = torch::where(p.valid, edge, torch::full_like(edge, edges));
      return torch::empty({edges + 1}, values.options())
          .index_copy_(0, to, values)
          .slice(0, 0, edges);
    };
    csc.indices = place(local);
    if (topo.typed() && edges > 0) {
      csc.etypes = place(p.segment.remainder(R));
      csc.run_entry = place(p.slot);
      csc.run_counts = run_counts;
      csc.relation_rows = host[2];
      csc.num_relations = host[3];
    }
    if (sample_options.edge_ids)
      edge_ids.push_back(
          place(topo.edge_ids(p.entry, nodes.index_select(0, p.segment.div(R, "trunc")))));
    out.blocks.push_back(device_block_tensors(csc));
    out.num_edges += edges;
    nodes = r.nodes.slice(0, 0, csc.num_src);
    if (temporal) times = r.times.slice(0, 0, csc.num_src);
  }
  out.input_nodes = nodes;
  out.input_times = times;
  if (sample_options.edge_ids)
    out.edge_ids = edge_ids.empty() ? torch::empty({0}, seeds.options()) : torch::cat(edge_ids);
  if (sample_options.degrees && !out.blocks.empty()) {
    const torch::Tensor& ptr = topo.run_ptr();
    const torch::Tensor degrees =
        ptr.index_select(0, (nodes + 1) * R) - ptr.index_select(0, nodes * R);
    for (nn::BlockTensors& b : out.blocks) b.graph_deg = degrees.slice(0, 0, b.num_src);
  }
  return out;
}

}  // namespace partita::train
