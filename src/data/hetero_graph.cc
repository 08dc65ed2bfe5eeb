// The steps both heterogeneous readers share: schema checks, the typed CSC builder, labels
// and splits in homogenised ids (conventions: data/hetero.h).
//
// The builder packs each CSC entry as one 64-bit key (relation << 47 | source), so sorting
// a row's keys sorts it by (relation, source) and std::unique drops the repeats within a
// relation; the keys are then split into in_edges.indices and edge_relation in place.
// Rows are filled by stripes of destinations, each thread scanning the edges in input order,
// so the result is the same for every thread count. With edge arrays the entries are
// data::EdgeOrderKeys instead (the packed key as the source, then time and listing position),
// ordered by data::order_rows as partition/shard_graph.cc orders them on ranks.
#include <algorithm>
#include <exception>

#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"
#include "partita/data/order_rows.h"
#include "readers.h"

namespace partita::data {
namespace {

constexpr int kRelationShift = 47;
constexpr uint64_t kSourceMask = (uint64_t{1} << kRelationShift) - 1;
constexpr int64_t kCheckChunk = int64_t{1} << 18;

bool in_range(int64_t v, int64_t lo, int64_t hi) {
  return static_cast<uint64_t>(v - lo) < static_cast<uint64_t>(hi - lo);
}

// Checks every id of relation `r` against its types' counts, in parallel; the error names
// the first bad edge. Returns the number of self loops.
int64_t check_relation_ids(const HeteroSchema& schema, int r, const RelationEdges& edges,
                           int threads) {
  const Relation& rel = schema.relations[r];
  const NodeType& src = schema.node_types[rel.src_type];
  const NodeType& dst = schema.node_types[rel.dst_type];
  const bool same_type = rel.src_type == rel.dst_type;
  const int64_t chunks = (edges.count + kCheckChunk - 1) / kCheckChunk;
  std::vector<int64_t> first_bad(static_cast<size_t>(chunks), -1);
  std::vector<int64_t> loops(static_cast<size_t>(chunks), 0);
  parallel_chunks(0, edges.count, kCheckChunk, threads, [&](int64_t b, int64_t e) {
    const int64_t chunk = b / kCheckChunk;
    for (int64_t i = b; i < e; ++i) {
      const int64_t s = edges.pairs[2 * i], d = edges.pairs[2 * i + 1];
      if (!in_range(s, 0, src.count) || !in_range(d, 0, dst.count)) {
        first_bad[chunk] = i;
        return;
      }
      loops[chunk] += same_type && s == d;
    }
  });
  for (int64_t i : first_bad) {
    if (i < 0) continue;
    const int64_t s = edges.pairs[2 * i], d = edges.pairs[2 * i + 1];
    const bool bad_src = !in_range(s, 0, src.count);
    const NodeType& t = bad_src ? src : dst;
    throw FormatError(
        fmt::format("{}: {} {}: edge ({}, {}): {} id {} is outside [0, {}) ({} has {} nodes)",
                    edges.source, edges.lines ? "line" : "row", edges.lines ? i + 1 : i, s, d,
                    bad_src ? "source" : "destination", bad_src ? s : d, t.count, t.name, t.count));
  }
  int64_t total = 0;
  for (int64_t n : loops) total += n;
  return total;
}

// Calls fn(lo, hi) on one thread per stripe [bound[t], bound[t+1]) of destination rows.
template <class Fn>
void for_each_stripe(const std::vector<int64_t>& bound, const Fn& fn) {
  const int64_t stripes = static_cast<int64_t>(bound.size()) - 1;
  parallel_chunks(0, stripes, 1, static_cast<int>(stripes), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) fn(bound[t], bound[t + 1]);
  });
}

// Rows of the typed CSC without edge arrays (build_hetero_graph): packed keys, each row
// sorted and deduplicated where it lies.
void build_packed_rows(Dataset& ds, const std::vector<RelationEdges>& edges, bool reverse,
                       int threads) {
  const HeteroSchema& schema = *ds.hetero;
  const int inputs = static_cast<int>(edges.size());
  const int64_t num_nodes = ds.num_nodes;
  // Pass 1: entries per destination (each stripe counts its own rows).
  graph::Csr& csc = ds.in_edges;
  csc.indptr.assign(static_cast<size_t>(num_nodes) + 1, 0);
  int64_t* count = csc.indptr.data() + 1;
  const int stripes = static_cast<int>(std::min<int64_t>(threads, num_nodes));
  std::vector<int64_t> bound(static_cast<size_t>(stripes) + 1);
  for (int t = 0; t <= stripes; ++t) bound[t] = num_nodes * t / stripes;
  auto offsets_of = [&](int r) {
    const Relation& rel = schema.relations[r];
    return std::pair<int64_t, int64_t>(schema.node_types[rel.src_type].offset,
                                       schema.node_types[rel.dst_type].offset);
  };
  for_each_stripe(bound, [&](int64_t lo, int64_t hi) {
    for (int r = 0; r < inputs; ++r) {
      const auto [so, doff] = offsets_of(r);
      const int64_t* p = edges[r].pairs;
      for (int64_t i = 0; i < edges[r].count; ++i) {
        const int64_t s = p[2 * i] + so, d = p[2 * i + 1] + doff;
        if (s == d) continue;
        if (in_range(d, lo, hi)) ++count[d];
        if (reverse && in_range(s, lo, hi)) ++count[s];
      }
    }
  });
  for (int64_t v = 0; v < num_nodes; ++v) csc.indptr[v + 1] += csc.indptr[v];
  const int64_t entries = csc.indptr[num_nodes];

  // Pass 2: packed keys at each destination's cursor; stripes now balance entries.
  for (int t = 1; t < stripes; ++t)
    bound[t] = std::lower_bound(csc.indptr.begin(), csc.indptr.end(), entries * t / stripes) -
               csc.indptr.begin();
  csc.indices.resize(static_cast<size_t>(entries));
  std::vector<int64_t> cursor(csc.indptr.begin(), csc.indptr.end() - 1);
  for_each_stripe(bound, [&](int64_t lo, int64_t hi) {
    uint64_t* keys = reinterpret_cast<uint64_t*>(csc.indices.data());
    for (int r = 0; r < inputs; ++r) {
      const auto [so, doff] = offsets_of(r);
      const uint64_t key = static_cast<uint64_t>(r) << kRelationShift;
      const uint64_t rev_key = static_cast<uint64_t>(inputs + r) << kRelationShift;
      const int64_t* p = edges[r].pairs;
      for (int64_t i = 0; i < edges[r].count; ++i) {
        const int64_t s = p[2 * i] + so, d = p[2 * i + 1] + doff;
        if (s == d) continue;
        if (in_range(d, lo, hi)) keys[cursor[d]++] = key | static_cast<uint64_t>(s);
        if (reverse && in_range(s, lo, hi)) keys[cursor[s]++] = rev_key | static_cast<uint64_t>(d);
      }
    }
  });
  std::vector<int64_t>().swap(cursor);

  // Sort and dedup each row where it lies, then split the keys into sources and relations.
  std::vector<int32_t>& relation = ds.edge_relation;
  relation.assign(static_cast<size_t>(entries), 0);
  std::vector<int64_t> kept(static_cast<size_t>(num_nodes));
  parallel_chunks(0, num_nodes, 1 << 14, threads, [&](int64_t b, int64_t e) {
    uint64_t* keys = reinterpret_cast<uint64_t*>(csc.indices.data());
    for (int64_t v = b; v < e; ++v) {
      uint64_t* first = keys + csc.indptr[v];
      uint64_t* last = keys + csc.indptr[v + 1];
      std::sort(first, last);
      const int64_t n = std::unique(first, last) - first;
      kept[v] = n;
      for (int64_t j = 0; j < n; ++j) {
        relation[csc.indptr[v] + j] = static_cast<int32_t>(first[j] >> kRelationShift);
        first[j] &= kSourceMask;
      }
    }
  });
  // Compact forward: a row's new start never exceeds its old start.
  int64_t write = 0;
  for (int64_t v = 0; v < num_nodes; ++v) {
    const int64_t start = csc.indptr[v];
    if (write != start) {
      std::copy(csc.indices.begin() + start, csc.indices.begin() + start + kept[v],
                csc.indices.begin() + write);
      std::copy(relation.begin() + start, relation.begin() + start + kept[v],
                relation.begin() + write);
    }
    csc.indptr[v] = write;
    write += kept[v];
  }
  csc.indptr[num_nodes] = write;
  csc.indices.resize(static_cast<size_t>(write));
  csc.indices.shrink_to_fit();
  relation.resize(static_cast<size_t>(write));
  relation.shrink_to_fit();
}

// Rows of the typed CSC with edge arrays (build_hetero_graph): EdgeOrderKeys whose source is
// the packed (relation, source), ordered by data::order_rows, the arrays gathered after.
void build_keyed_rows(Dataset& ds, const std::vector<RelationEdges>& edges,
                      const std::vector<ExtraArray>& listed, bool reverse, int threads) {
  const HeteroSchema& schema = *ds.hetero;
  const int inputs = static_cast<int>(edges.size());
  const int64_t num_nodes = ds.num_nodes;
  int64_t listed_edges = 0;
  for (const RelationEdges& e : edges) listed_edges += e.count;
  for (const ExtraArray& a : listed)
    PARTITA_CHECK(a.rows() == listed_edges, Error, "internal: {} holds {} rows for {} edges",
                  a.name, a.rows(), listed_edges);
  const ExtraArray* time = find_array(listed, kEdgeTimeName);
  const int64_t* t = time ? reinterpret_cast<const int64_t*>(time->values.data()) : nullptr;
  // fn(row, key) for every entry, in listing order.
  auto for_each_entry = [&](auto&& fn) {
    int64_t base = 0;
    for (int r = 0; r < inputs; ++r) {
      const Relation& rel = schema.relations[r];
      const int64_t so = schema.node_types[rel.src_type].offset;
      const int64_t doff = schema.node_types[rel.dst_type].offset;
      const uint64_t key = static_cast<uint64_t>(r) << kRelationShift;
      const uint64_t rev_key = static_cast<uint64_t>(inputs + r) << kRelationShift;
      const int64_t* p = edges[r].pairs;
      for (int64_t i = 0; i < edges[r].count; ++i) {
        const int64_t s = p[2 * i] + so, d = p[2 * i + 1] + doff, at = base + i;
        if (s == d) continue;
        const int64_t when = t ? t[at] : 0;
        fn(d, EdgeOrderKey{static_cast<int64_t>(key | static_cast<uint64_t>(s)), when, 2 * at});
        if (reverse)
          fn(s, EdgeOrderKey{static_cast<int64_t>(rev_key | static_cast<uint64_t>(d)), when,
                             2 * at + 1});
      }
      base += edges[r].count;
    }
  };
  graph::Csr& csc = ds.in_edges;
  csc.indptr.assign(static_cast<size_t>(num_nodes) + 1, 0);
  for_each_entry([&](int64_t row, const EdgeOrderKey&) { ++csc.indptr[row + 1]; });
  for (int64_t v = 0; v < num_nodes; ++v) csc.indptr[v + 1] += csc.indptr[v];
  std::vector<EdgeOrderKey> keys(static_cast<size_t>(csc.indptr[num_nodes]));
  {
    std::vector<int64_t> cursor(csc.indptr.begin(), csc.indptr.end() - 1);
    for_each_entry([&](int64_t row, const EdgeOrderKey& k) { keys[cursor[row]++] = k; });
  }
  const int64_t out = order_rows(&csc.indptr, &keys, time != nullptr, threads,
                                 [](const EdgeOrderKey& k) { return k; });
  csc.indices.resize(static_cast<size_t>(out));
  ds.edge_relation.resize(static_cast<size_t>(out));
  std::vector<int64_t> positions(static_cast<size_t>(out));
  for (int64_t k = 0; k < out; ++k) {
    const uint64_t key = static_cast<uint64_t>(keys[k].source);
    csc.indices[k] = static_cast<int64_t>(key & kSourceMask);
    ds.edge_relation[k] = static_cast<int32_t>(key >> kRelationShift);
    positions[k] = keys[k].position / 2;
  }
  std::vector<EdgeOrderKey>().swap(keys);
  ds.edge_arrays = gather_rows(listed, positions);
}

}  // namespace

void check_hetero_options(const LoadOptions& options) {
  PARTITA_CHECK_PARAM(!options.undirected, "undirected",
                      "not for heterogeneous datasets: they get the reverse of every relation "
                      "(\"rev_<name>\") by default (see `reverse_relations`)");
}

void check_type_name(const std::string& name, const HeteroSchema& schema,
                     const std::string& source) {
  PARTITA_CHECK(!name.empty(), FormatError, "{}: a node type has an empty name", source);
  PARTITA_CHECK(name != "." && name != ".." && name.find('/') == std::string::npos &&
                    name.find("___") == std::string::npos,
                FormatError,
                "{}: node type name '{}' cannot name a folder (no '/', no \"___\", not . or ..)",
                source, name);
  PARTITA_CHECK(schema.find_type(name) < 0, FormatError, "{}: node type '{}' is listed twice",
                source, name);
}

void set_type_offsets(Dataset& ds, const std::string& source) {
  int64_t offset = 0;
  for (NodeType& t : ds.hetero->node_types) {
    t.offset = offset;
    offset += t.count;
    PARTITA_CHECK(offset <= kMaxHeteroNodes, FormatError,
                  "{}: more than {} nodes in all types together (not supported)", source,
                  kMaxHeteroNodes);
  }
  ds.num_nodes = offset;
}

void build_hetero_graph(Dataset& ds, const std::vector<RelationEdges>& edges,
                        const LoadOptions& options, const std::vector<ExtraArray>& listed) {
  HeteroSchema& schema = *ds.hetero;
  const int inputs = schema.num_relations();
  PARTITA_CHECK(static_cast<int>(edges.size()) == inputs && inputs <= kMaxInputRelations, Error,
                "internal: {} edge lists for {} relations", edges.size(), inputs);
  const int threads = resolve_threads(options.threads);
  const bool reverse = options.reverse_relations;

  Stopwatch watch;
  ds.input_edges = 0;
  ds.self_loops_dropped = 0;
  for (int r = 0; r < inputs; ++r) {
    ds.self_loops_dropped += check_relation_ids(schema, r, edges[r], threads);
    ds.input_edges += edges[r].count;
  }
  PARTITA_CHECK(ds.input_edges > ds.self_loops_dropped, FormatError,
                "{}: no relation has an edge (a graph needs edges)",
                inputs > 0 ? edges[0].source : ds.path);
  if (reverse) schema.add_reverse_relations();
  const double check_s = watch.seconds();

  watch.restart();
  if (listed.empty())
    build_packed_rows(ds, edges, reverse, threads);
  else
    build_keyed_rows(ds, edges, listed, reverse, threads);
  const std::vector<int32_t>& relation = ds.edge_relation;

  for (Relation& rel : schema.relations) rel.num_edges = 0;
  for (int32_t r : relation) ++schema.relations[r].num_edges;
  int64_t stored_inputs = 0;
  for (int r = 0; r < inputs; ++r) stored_inputs += schema.relations[r].num_edges;
  ds.duplicates_dropped = ds.input_edges - ds.self_loops_dropped - stored_inputs;
  log_debug("{}: typed in-edge CSC built on {} threads: check {:.2f} s, rows {:.2f} s", ds.path,
            threads, check_s, watch.seconds());
}

void set_hetero_labels(Dataset& ds, const std::vector<int64_t>& target_labels,
                       const std::string& source) {
  const NodeType& target = ds.hetero->node_types[ds.hetero->target_type];
  ds.num_classes = validate_labels(target_labels, source);
  ds.labels.assign(static_cast<size_t>(ds.num_nodes), -1);
  std::copy(target_labels.begin(), target_labels.end(), ds.labels.begin() + target.offset);
}

std::vector<int64_t> to_homogenised(std::vector<int64_t> ids, int64_t offset) {
  for (int64_t& v : ids) v += offset;
  return ids;
}

}  // namespace partita::data
