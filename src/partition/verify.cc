// Thorough verification of a partition directory: checksums, then contents.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "partita/core/error.h"
#include "partita/core/half.h"
#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/partition/format.h"

namespace partita::partition {
namespace {

constexpr int64_t kCrcChunkBytes = int64_t{32} << 20;
constexpr int64_t kScanChunk = int64_t{1} << 16;  // rows or elements per parallel task

// CRC-32 of a whole mapped file: chunks in parallel, joined with crc32_combine, so the result
// equals the sequential zlib CRC. Pages are released once summed.
uint32_t file_crc32(const MappedFile& file, int threads) {
  const int64_t size = static_cast<int64_t>(file.size());
  const int64_t chunks = (size + kCrcChunkBytes - 1) / kCrcChunkBytes;
  std::vector<uint32_t> crcs(static_cast<size_t>(chunks));
  parallel_chunks(0, chunks, 1, threads, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t off = c * kCrcChunkBytes;
      const size_t len = static_cast<size_t>(std::min(kCrcChunkBytes, size - off));
      crcs[c] = crc32_update(0, file.data() + off, len);
      file.release(static_cast<size_t>(off), len);
    }
  });
  uLong crc = 0;  // the CRC of no bytes: combined with a chunk's, that chunk's
  for (int64_t c = 0; c < chunks; ++c)
    crc = ::crc32_combine(
        crc, crcs[c], static_cast<z_off_t>(std::min(kCrcChunkBytes, size - c * kCrcChunkBytes)));
  return static_cast<uint32_t>(crc);
}

// Runs check(begin, end) -> "" or a problem over chunks of [0, n) in parallel and throws
// FormatError "<path>: <problem>" for the first chunk (in index order) that found one.
template <class Check>
void scan(const std::string& path, int64_t n, int threads, Check check) {
  const int64_t chunks = (n + kScanChunk - 1) / kScanChunk;
  std::vector<std::string> problems(static_cast<size_t>(chunks));
  parallel_chunks(0, n, kScanChunk, threads,
                  [&](int64_t b, int64_t e) { problems[b / kScanChunk] = check(b, e); });
  for (const std::string& p : problems) PARTITA_CHECK(p.empty(), FormatError, "{}: {}", path, p);
}

void check_permutation(const NpyArray& a, int64_t n) {
  auto v = a.view<int64_t>();
  std::vector<uint8_t> seen(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < v.size(); ++i) {
    PARTITA_CHECK(v[i] >= 0 && v[i] < n, FormatError, "{}: entry {} = {} is outside [0, {})",
                  a.path(), i, v[i], n);
    PARTITA_CHECK(!seen[v[i]], FormatError,
                  "{}: original id {} appears twice (entry {}); not a permutation", a.path(), v[i],
                  i);
    seen[v[i]] = 1;
  }
  a.release_elements(0, v.size());
}

// The values of a part's optional arrays: weights finite and > 0, edge features finite (the
// dtypes and shapes were checked against partita.json, the bytes by their checksums).
void check_edge_values(const PartFiles& f, int threads) {
  if (f.edge_weight.ndim() == 1) {
    auto w = f.edge_weight.view<float>();
    scan(f.edge_weight.path(), w.size(), threads, [&](int64_t b, int64_t e) -> std::string {
      for (int64_t k = b; k < e; ++k)
        if (!std::isfinite(w[k]) || !(w[k] > 0))
          return fmt::format("entry {} is {}; a weight must be finite and > 0", k, w[k]);
      return "";
    });
  }
  if (f.edge_feat.ndim() == 2) {
    const int64_t rows = f.edge_feat.dim(0), d = f.edge_feat.dim(1);
    const DType dtype = f.edge_feat.dtype();
    const unsigned char* data = f.edge_feat.data();
    scan(f.edge_feat.path(), rows, threads, [&](int64_t b, int64_t e) -> std::string {
      std::vector<float> row(static_cast<size_t>(d));
      for (int64_t r = b; r < e; ++r) {
        widen_to_floats(data + r * d * dtype_size(dtype), d, dtype, row.data());
        for (int64_t c = 0; c < d; ++c)
          if (!std::isfinite(row[c]))
            return fmt::format("row {} column {}: value {} is not finite", r, c, row[c]);
      }
      return "";
    });
  }
}

// A typed part's relations (check_part checked the sources): relation ids in range, rows
// sorted by (relation, original source) and unique within a relation (with edge_time
// `time`: ascending by (relation, original source, time)), endpoint types matching the
// relation, per-relation counts.
void check_relations(const PartitionMeta& m, int p, const PartFiles& f, int threads,
                     ArrayView<const int64_t> node_map, ArrayView<const int64_t> time) {
  const TypedMeta& tm = *m.typed;
  const int64_t lo = m.ranges[p], rows = m.part_nodes(p);
  const bool timed = m.has_array("edge_time");
  auto indptr = f.indptr.view<int64_t>();
  auto indices = f.indices.view<int64_t>();
  auto etype = f.etype.view<int32_t>();
  const int relations = tm.num_relations();
  // The type of a source, from its original id (every original id lies in one type's range).
  auto original_type = [&](int64_t gid) { return tm.type_of_original(node_map[gid]); };
  std::vector<std::vector<int64_t>> counts(
      static_cast<size_t>((rows + kScanChunk - 1) / kScanChunk));
  scan(f.etype.path(), rows, threads, [&](int64_t b, int64_t e) -> std::string {
    std::vector<int64_t>& c = counts[b / kScanChunk];
    c.assign(static_cast<size_t>(relations), 0);
    for (int64_t i = b; i < e; ++i) {
      const int dst_type = original_type(lo + i);
      for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
        const int32_t r = etype[k];
        if (r < 0 || r >= relations)
          return fmt::format("entry {} (row {}) = {} is not a relation id in [0, {})", k, i, r,
                             relations);
        ++c[r];
        const TypedRelation& rel = tm.relations[r];
        if (k > indptr[i]) {
          const int32_t pr = etype[k - 1];
          const int64_t os = node_map[indices[k]], ps = node_map[indices[k - 1]];
          if (!timed && (r < pr || (r == pr && os <= ps)))
            return fmt::format(
                "row {} is not sorted by (relation, original source) and unique within a "
                "relation at entry {} (relation {} after {})",
                i, k, r, pr);
          if (timed && std::tuple{r, os, time[k]} < std::tuple{pr, ps, time[k - 1]})
            return fmt::format(
                "row {} is not ascending by (relation, original source, edge_time) at entry {} "
                "(relation {} after {}, time {} after {})",
                i, k, r, pr, time[k], time[k - 1]);
        }
        const int src_type = original_type(indices[k]);
        if (src_type != rel.src_type || dst_type != rel.dst_type)
          return fmt::format(
              "entry {} (row {}): relation {} ('{}') joins types '{}' -> '{}', but the edge "
              "joins '{}' -> '{}'",
              k, i, r, tm.triplet(r), tm.node_types[rel.src_type].name,
              tm.node_types[rel.dst_type].name, tm.node_types[src_type].name,
              tm.node_types[dst_type].name);
      }
    }
    f.indices.release_elements(indptr[b], indptr[e]);
    f.etype.release_elements(indptr[b], indptr[e]);
    return "";
  });
  for (int r = 0; r < relations; ++r) {
    int64_t total = 0;
    for (const std::vector<int64_t>& c : counts) total += c[r];
    PARTITA_CHECK(total == m.summary.parts[p].relation_edges[r], FormatError,
                  "{}: {} entries of relation {} ('{}'), partita.json says {}", f.etype.path(),
                  total, r, tm.triplet(r), m.summary.parts[p].relation_edges[r]);
  }
}

// `node_map` is the checked permutation: rows must be strictly ascending in ORIGINAL ids (with
// edge_time, ascending by (original id, time), repeats allowed); a typed part's rows by
// relation first (check_relations), its node_map's original ids in their type's range, its
// labels -1 exactly outside the target type and its splits of the target type.
void check_part(const std::string& dir, const PartitionMeta& m, int p, int threads,
                ArrayView<const int64_t> node_map) {
  const PartFiles f = open_part(dir, m, p);
  const int64_t lo = m.ranges[p], hi = m.ranges[p + 1], rows = hi - lo, n = m.num_nodes;
  const TypedMeta* tm = m.typed ? &*m.typed : nullptr;

  auto indptr = f.indptr.view<int64_t>();
  const int64_t edges = f.indices.num_elements();
  PARTITA_CHECK(indptr[0] == 0, FormatError, "{}: starts at {}, expected 0", f.indptr.path(),
                indptr[0]);
  for (int64_t i = 0; i < rows; ++i)
    PARTITA_CHECK(indptr[i + 1] >= indptr[i], FormatError, "{}: decreases at row {} ({} then {})",
                  f.indptr.path(), i, indptr[i], indptr[i + 1]);
  PARTITA_CHECK(indptr[rows] == edges, FormatError, "{}: ends at {}, expected the edge count {}",
                f.indptr.path(), indptr[rows], edges);
  for (int t = 0; tm && t < tm->num_types(); ++t) {
    const auto [first, end] = tm->type_range(p, t);
    const TypedNodeType& type = tm->node_types[t];
    for (int64_t gid = first; gid < end; ++gid)
      PARTITA_CHECK(node_map[gid] >= type.offset && node_map[gid] < type.offset + type.count,
                    FormatError,
                    "{}/{}: new id {} (part {}, type '{}' by hetero.type_starts) has original id "
                    "{}, outside the type's range [{}, {})",
                    dir, kNodeMapFile, gid, p, type.name, node_map[gid], type.offset,
                    type.offset + type.count);
  }

  auto indices = f.indices.view<int64_t>();
  // With edge_time a source repeats (at later or equal times); without, rows are strict.
  const bool timed = m.has_array("edge_time");
  const auto time = timed ? f.edge_time.view<int64_t>() : ArrayView<const int64_t>{};
  scan(f.indices.path(), rows, threads, [&](int64_t b, int64_t e) -> std::string {
    for (int64_t i = b; i < e; ++i) {
      for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
        const int64_t s = indices[k];
        if (s < 0 || s >= n)
          return fmt::format("entry {} (row {}) = {} is outside [0, {})", k, i, s, n);
        if (k > indptr[i] && !tm && !timed && node_map[s] <= node_map[indices[k - 1]])
          return fmt::format("row {} is not strictly ascending in original ids at entry {}", i, k);
        if (k > indptr[i] && !tm && timed &&
            std::pair{node_map[s], time[k]} < std::pair{node_map[indices[k - 1]], time[k - 1]})
          return fmt::format(
              "row {} is not ascending by (original id, edge_time) at entry {} (time {} after {})",
              i, k, time[k], time[k - 1]);
        if (s == lo + i) return fmt::format("row {} lists its own node {} (self loop)", i, s);
      }
    }
    if (!tm) f.indices.release_elements(indptr[b], indptr[e]);
    return "";
  });
  if (tm) check_relations(m, p, f, threads, node_map, time);
  if (!tm) check_edge_values(f, threads);

  // The target type's range (typed), else the part's: where labels and split ids lie.
  const std::pair<int64_t, int64_t> target =
      tm ? tm->type_range(p, tm->target_type) : std::pair{lo, hi};
  auto label = f.label.view<int64_t>();
  scan(f.label.path(), rows, threads, [&](int64_t b, int64_t e) -> std::string {
    for (int64_t i = b; i < e; ++i) {
      const bool in_target = lo + i >= target.first && lo + i < target.second;
      if (!tm && (label[i] < -1 || label[i] >= m.num_classes))  // -1: unlabelled, in no split
        return fmt::format("label {} of row {} is outside [0, {}) (or -1: unlabelled)", label[i], i,
                           m.num_classes);
      if (tm && in_target && (label[i] < 0 || label[i] >= m.num_classes))
        return fmt::format("label {} of row {} (target type '{}') is outside [0, {})", label[i], i,
                           tm->node_types[tm->target_type].name, m.num_classes);
      if (tm && !in_target && label[i] != -1)
        return fmt::format("label {} of row {} (type '{}', not the target type) must be -1",
                           label[i], i, tm->node_types[tm->type_of(p, lo + i)].name);
    }
    return "";
  });
  // Split ids lie in the target range, ascending, and have labels (not -1).
  for (const NpyArray* split : {&f.train_idx, &f.valid_idx, &f.test_idx}) {
    auto ids = split->view<int64_t>();
    for (int64_t i = 0; i < ids.size(); ++i) {
      PARTITA_CHECK(ids[i] >= target.first && ids[i] < target.second, FormatError,
                    "{}: id {} at position {} is not owned by part {} (range [{}, {}))",
                    split->path(), ids[i], i, p, target.first, target.second);
      PARTITA_CHECK(label[ids[i] - lo] >= 0, FormatError,
                    "{}: node {} at position {} has label {} (unlabelled) in {}", split->path(),
                    ids[i], i, label[ids[i] - lo], f.label.path());
      PARTITA_CHECK(i == 0 || ids[i] > ids[i - 1], FormatError,
                    "{}: not strictly ascending at position {}", split->path(), i);
    }
  }
  if (tm) check_edge_values(f, threads);
}

using NodePair = std::pair<int64_t, int64_t>;
NodePair unordered(int64_t a, int64_t b) { return {std::min(a, b), std::max(a, b)}; }

// Pair ids in [0, n) and no self loop; "" or the problem of row i.
std::string pair_problem(int64_t i, int64_t a, int64_t b, int64_t n) {
  if (a < 0 || a >= n || b < 0 || b >= n)
    return fmt::format("row {}: ({}, {}) has an id outside [0, {})", i, a, b, n);
  if (a == b) return fmt::format("row {}: ({}, {}) is a self loop", i, a, b);
  return "";
}

// A link-prediction split: held-out positives absent from every part's graph (both ways);
// negatives not stored edges nor held-out positives, and unique (as unordered pairs); each
// part's training pairs owned by it (destination), sorted by (dst, src), and, when sampled,
// stored edges.
void check_edge_split(const std::string& dir, const PartitionMeta& m, int threads,
                      ArrayView<const int64_t> node_map) {
  const EdgeSplitStats& e = *m.summary.edge_split;
  std::vector<PartFiles> parts;  // the stored message-passing graph, in new ids
  for (int p = 0; p < m.num_parts; ++p) parts.push_back(open_part(dir, m, p));
  // Whether u -> v is stored (row v lists its sources ascending in original ids).
  auto has_edge = [&](int64_t u, int64_t v) {
    const int p = m.owner(v);
    const int64_t* indices = parts[p].indices.view<int64_t>().data();
    auto indptr = parts[p].indptr.view<int64_t>();
    const int64_t *first = indices + indptr[v - m.ranges[p]],
                  *last = indices + indptr[v - m.ranges[p] + 1];
    const int64_t* it = std::lower_bound(first, last, node_map[u],
                                         [&](int64_t s, int64_t k) { return node_map[s] < k; });
    return it != last && *it == u;
  };
  const int64_t n = m.num_nodes;
  std::set<NodePair> positives, negatives;
  for (size_t f = 0; f < 4; ++f) {
    const bool negative = f % 2 == 1;
    const NpyArray a = NpyArray::open(dir + "/" + kEdgeSplitFiles[f]);
    auto v = a.view<int64_t>();
    for (int64_t i = 0; i < v.size() / 2; ++i) {
      const int64_t s = v[2 * i], d = v[2 * i + 1];
      const std::string problem = pair_problem(i, s, d, n);
      PARTITA_CHECK(problem.empty(), FormatError, "{}: {}", a.path(), problem);
      PARTITA_CHECK(!has_edge(s, d) && !has_edge(d, s), FormatError,
                    "{}: row {}: ({}, {}) is an edge of the stored graph{}", a.path(), i, s, d,
                    negative ? "; a negative must not be" : "; held-out edges must be removed");
      if (!negative) {
        positives.insert(unordered(s, d));
        continue;
      }
      PARTITA_CHECK(!positives.count(unordered(s, d)), FormatError,
                    "{}: row {}: ({}, {}) is a held-out positive edge", a.path(), i, s, d);
      PARTITA_CHECK(negatives.insert(unordered(s, d)).second, FormatError,
                    "{}: row {}: ({}, {}) repeats an earlier negative pair", a.path(), i, s, d);
    }
  }
  const bool sampled = e.source == "sampled";
  // Split by time: held-out times never earlier than training times, test than validation.
  int64_t earliest_held = std::numeric_limits<int64_t>::max();
  if (e.by_time) {
    const NpyArray valid = NpyArray::open(dir + "/" + kEdgeSplitTimeFiles[0]);
    const NpyArray test = NpyArray::open(dir + "/" + kEdgeSplitTimeFiles[2]);
    auto v = valid.view<int64_t>(), t = test.view<int64_t>();
    const auto [first_valid, last_valid] = std::minmax_element(v.begin(), v.end());
    const int64_t* first_test = std::min_element(t.begin(), t.end());
    PARTITA_CHECK(v.size() == 0 || t.size() == 0 || *last_valid <= *first_test, FormatError,
                  "{}/{}: a validation edge at time {} is later than a test edge at time {}", dir,
                  kEdgeSplitTimeFiles[0], *last_valid, *first_test);
    if (v.size() > 0) earliest_held = *first_valid;
    if (t.size() > 0) earliest_held = std::min(earliest_held, *first_test);
  }
  for (int p = 0; p < m.num_parts; ++p) {
    const NpyArray a = NpyArray::open(dir + "/" + part_file(p, kTrainEdgesName));
    auto v = a.view<int64_t>();
    const NpyArray time_file =
        e.by_time ? NpyArray::open(dir + "/" + part_file(p, kTrainEdgeTimeName)) : NpyArray();
    const int64_t* times = e.by_time ? time_file.view<int64_t>().data() : nullptr;
    auto time_of = [&](int64_t i) { return times ? times[i] : 0; };  // 0: no times
    scan(a.path(), v.size() / 2, threads, [&](int64_t b, int64_t end) -> std::string {
      for (int64_t i = b; i < end; ++i) {
        const int64_t s = v[2 * i], d = v[2 * i + 1];
        std::string problem = pair_problem(i, s, d, n);
        if (!problem.empty()) return problem;
        if (d < m.ranges[p] || d >= m.ranges[p + 1])
          return fmt::format("row {}: destination {} is not owned by part {}", i, d, p);
        if (i > 0 &&
            std::tuple(v[2 * i - 1], v[2 * i - 2], time_of(i - 1)) >= std::tuple(d, s, time_of(i)))
          return fmt::format("row {}: not strictly ascending by (dst, src{})", i,
                             e.by_time ? ", time" : "");
        if (time_of(i) > earliest_held)  // never without times: earliest_held is then the maximum
          return fmt::format("row {}: time {} is later than a held-out edge's ({})", i, time_of(i),
                             earliest_held);
        if (positives.count(unordered(s, d)))
          return fmt::format("row {}: ({}, {}) is a held-out edge", i, s, d);
        if (sampled && !has_edge(s, d))
          return fmt::format("row {}: ({}, {}) is not an edge of the stored graph", i, s, d);
      }
      return "";
    });
  }
}

}  // namespace

VerifyReport verify_partition(const std::string& dir, int threads) {
  threads = resolve_threads(threads);
  const PartitionMeta m = read_meta(dir);
  VerifyReport report;
  for (const FileEntry& entry : m.files) {
    const std::string path = dir + "/" + entry.path;
    std::error_code ec;
    PARTITA_CHECK(std::filesystem::is_regular_file(path, ec), FormatError,
                  "{}: missing (listed in {})", path, kMetaFileName);
    const NpyArray a = NpyArray::open(path);  // header, and size against the header
    PARTITA_CHECK(a.dtype() == entry.dtype && a.header().shape == entry.shape, FormatError,
                  "{}: holds {} {}, {} says {} {}", path, dtype_name(a.dtype()),
                  a.header().shape_string(), kMetaFileName, dtype_name(entry.dtype),
                  NpyHeader{entry.dtype, entry.shape}.shape_string());
    const uint32_t crc = file_crc32(a.file(), threads);
    PARTITA_CHECK(crc == entry.crc32, FormatError,
                  "{}: checksum mismatch: CRC-32 of the file is {}, {} says {}", path, crc,
                  kMetaFileName, entry.crc32);
    ++report.files;
    report.bytes += static_cast<int64_t>(a.file().size());
  }
  log_debug("verify: {} files, checksums OK; checking contents", report.files);
  const NpyArray node_map = NpyArray::open(dir + "/" + kNodeMapFile);
  check_permutation(node_map, m.num_nodes);
  for (int p = 0; p < m.num_parts; ++p) check_part(dir, m, p, threads, node_map.view<int64_t>());
  if (m.summary.edge_split) check_edge_split(dir, m, threads, node_map.view<int64_t>());
  return report;
}

}  // namespace partita::partition
