// Degree-corrected stochastic block model written in the Partita numpy layout.
//
// Determinism: every random quantity comes from a stream keyed by (seed, purpose, chunk
// index), chunks have fixed sizes, and chunks are written in index order, so the bytes
// depend on the options alone, never on `threads`. Memory: per-node tables (~40 bytes a
// node) plus a bounded batch of chunks; edges and features are streamed to disk.
#include "partita/data/generate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include "alias_table.h"
#include "dcsbm.h"
#include "generate_util.h"
#include "partita/core/directory.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/npy.h"
#include "partita/core/parallel.h"
#include "partita/core/parameter_error.h"
#include "partita/core/random.h"
#include "partita/core/timer.h"

namespace partita::data {
using namespace dcsbm;  // NOLINT: the model's pieces (dcsbm.h) are this file's own
namespace {

namespace fs = std::filesystem;

// Fractions within this of summing to 1 put every node in a split.
constexpr double kFractionSumTolerance = 1e-9;

// floor(fraction * nodes), with products within a relative 1e-12 of an integer taken as
// that integer: 0.29 * 100 is 28.999999999999996 in doubles. The nudge is below 0.003 for
// any node count allowed, so it never moves a product whose fraction has a few digits.
int64_t fraction_of(double fraction, int64_t nodes) {
  return static_cast<int64_t>(std::floor(fraction * static_cast<double>(nodes) * (1 + 1e-12)));
}

}  // namespace

void validate_split_fractions(const GenerateOptions& o) {
  const auto in_unit_range = [](double f) { return std::isfinite(f) && f >= 0 && f <= 1; };
  PARTITA_CHECK_PARAM(in_unit_range(o.train_fraction), "train_fraction",
                      "must be in [0, 1], got {}", o.train_fraction);
  PARTITA_CHECK_PARAM(in_unit_range(o.valid_fraction), "valid_fraction",
                      "must be in [0, 1], got {}", o.valid_fraction);
  PARTITA_CHECK_PARAM(in_unit_range(o.test_fraction), "test_fraction", "must be in [0, 1], got {}",
                      o.test_fraction);
  const double sum = o.train_fraction + o.valid_fraction + o.test_fraction;
  // Three parameters at fault together: a UsageError naming them all, in backquotes.
  PARTITA_CHECK(sum <= 1 + kFractionSumTolerance, UsageError,
                "`train_fraction`, `valid_fraction`, `test_fraction`: must sum to at most 1, got "
                "{} + {} + {} = {}",
                o.train_fraction, o.valid_fraction, o.test_fraction, sum);
  PARTITA_CHECK_PARAM(fraction_of(o.train_fraction, o.nodes) >= 1, "train_fraction",
                      "{} x {} nodes gives no training node", o.train_fraction, o.nodes);
}

namespace dcsbm {

void validate(const GenerateOptions& o) {
  PARTITA_CHECK_PARAM(!o.out_dir.empty(), "out_dir", "an output directory is required");
  PARTITA_CHECK_PARAM(o.nodes >= 2 && o.nodes <= std::numeric_limits<int32_t>::max(), "nodes",
                      "must be in [2, 2147483647], got {}", o.nodes);
  PARTITA_CHECK_PARAM(std::isfinite(o.avg_degree) && o.avg_degree > 0, "avg_degree",
                      "must be a positive number, got {}", o.avg_degree);
  const double edges = std::round(static_cast<double>(o.nodes) * o.avg_degree);
  PARTITA_CHECK_PARAM(edges >= 1 && edges <= std::ldexp(1.0, 36), "avg_degree",
                      "`nodes` x `avg_degree` = {} edges; must be in [1, 2^36]", edges);
  validate_class_model({o.nodes, "nodes", "`nodes`", o.feat_dim, o.classes, o.homophily,
                        o.power_law, o.feature_noise});
  validate_split_fractions(o);
  PARTITA_CHECK_PARAM(o.edge_feat_dim >= 0 && o.edge_feat_dim <= (int64_t{1} << 16),
                      "edge_feat_dim", "must be in [0, 65536], got {}", o.edge_feat_dim);
}

Model build_model(const GenerateOptions& o, int threads) {
  Model m;
  m.nodes = o.nodes;
  m.label.resize(static_cast<size_t>(o.nodes));
  std::vector<double> theta(static_cast<size_t>(o.nodes));
  // Pareto weights, tail index power_law - 1, capped so the largest expected degree stays
  // near sqrt(nodes * avg_degree).
  const double cap = std::max(1.0, std::sqrt(static_cast<double>(o.nodes) / o.avg_degree));
  const double exponent = -1.0 / (o.power_law - 1.0);
  parallel_chunks(0, o.nodes, kNodeChunk, threads, [&](int64_t b, int64_t e) {
    Rng classes(stream_key(o.seed, kClasses, static_cast<uint64_t>(b / kNodeChunk)));
    Rng weights(stream_key(o.seed, kTheta, static_cast<uint64_t>(b / kNodeChunk)));
    for (int64_t v = b; v < e; ++v) {
      m.label[v] = static_cast<int64_t>(classes.below(static_cast<uint64_t>(o.classes)));
      theta[v] = std::min(cap, std::pow(1.0 - weights.uniform(), exponent));
    }
  });
  std::vector<uint32_t> ids(static_cast<size_t>(o.nodes));
  std::vector<uint16_t> tags(static_cast<size_t>(o.nodes));
  for (int64_t v = 0; v < o.nodes; ++v) {
    ids[v] = static_cast<uint32_t>(v);
    tags[v] = static_cast<uint16_t>(m.label[v]);
  }
  m.global.resize(static_cast<size_t>(o.nodes));
  build_alias_slots(theta.data(), ids.data(), tags.data(), o.nodes, m.global.data());
  std::vector<uint16_t>().swap(tags);

  // Group nodes by class (counting sort), then one alias table per community.
  m.community_offset.assign(static_cast<size_t>(o.classes) + 1, 0);
  for (int64_t c : m.label) ++m.community_offset[c + 1];
  for (int64_t c = 0; c < o.classes; ++c) m.community_offset[c + 1] += m.community_offset[c];
  std::vector<int64_t> cursor(m.community_offset.begin(), m.community_offset.end() - 1);
  std::vector<double> member_theta(static_cast<size_t>(o.nodes));
  for (int64_t v = 0; v < o.nodes; ++v) {
    const int64_t at = cursor[m.label[v]]++;
    ids[at] = static_cast<uint32_t>(v);
    member_theta[at] = theta[v];
  }
  std::vector<double>().swap(theta);
  m.community.resize(static_cast<size_t>(o.nodes));
  for (int64_t c = 0; c < o.classes; ++c) {
    const int64_t b = m.community_offset[c], n = m.community_offset[c + 1] - b;
    if (n > 0) {
      build_alias_slots(member_theta.data() + b, ids.data() + b, nullptr, n, &m.community[b]);
    }
  }
  return m;
}

// Edges of chunk `chunk`: (src, dst) pairs, src ~ theta, dst ~ theta inside src's
// community with probability homophily, else ~ theta over all nodes; never src itself.
// Table lookups are random accesses into tables larger than the caches, so edges go in
// groups: draw all slot indices of a group and prefetch them, then resolve them.
void generate_edge_chunk(const Model& m, const GenerateOptions& o, int64_t chunk, int64_t count,
                         int64_t* out) {
  constexpr int kGroup = 32;
  Rng rng(stream_key(o.seed, kEdges, static_cast<uint64_t>(chunk)));
  const uint64_t n = static_cast<uint64_t>(m.nodes);
  const AliasSlot* const global = m.global.data();
  const AliasSlot* src_slot[kGroup];
  const AliasSlot* dst_table[kGroup];
  const AliasSlot* dst_slot[kGroup];
  uint64_t dst_size[kGroup];
  uint32_t src[kGroup];
  float src_u[kGroup], dst_u[kGroup];
  for (int64_t base = 0; base < count; base += kGroup) {
    const int g = static_cast<int>(std::min<int64_t>(kGroup, count - base));
    for (int i = 0; i < g; ++i) {
      src_slot[i] = global + rng.below(n);
      src_u[i] = static_cast<float>(rng.uniform());
      __builtin_prefetch(src_slot[i]);
    }
    for (int i = 0; i < g; ++i) {
      const AliasSlot& s = *src_slot[i];
      const bool keep = alias_keeps(s, src_u[i]);
      src[i] = keep ? s.keep : s.alias;
      const int64_t c = keep ? s.keep_tag : s.alias_tag;
      const int64_t offset = m.community_offset[c];
      const uint64_t size = static_cast<uint64_t>(m.community_offset[c + 1] - offset);
      const bool inside = rng.uniform() < o.homophily && size > 1;
      dst_table[i] = inside ? m.community.data() + offset : global;
      dst_size[i] = inside ? size : n;
      dst_slot[i] = dst_table[i] + rng.below(dst_size[i]);
      dst_u[i] = static_cast<float>(rng.uniform());
      __builtin_prefetch(dst_slot[i]);
    }
    for (int i = 0; i < g; ++i) {
      const AliasSlot& s = *dst_slot[i];
      uint32_t dst = alias_keeps(s, dst_u[i]) ? s.keep : s.alias;
      for (int tries = 0; dst == src[i] && tries < kMaxRedraws; ++tries) {
        dst = draw_alias(dst_table[i], dst_size[i], rng);
      }
      while (dst == src[i]) dst = dst_table[i][rng.below(dst_size[i])].keep;  // src dominates
      out[2 * (base + i)] = src[i];
      out[2 * (base + i) + 1] = dst;
    }
  }
}

// Feature rows [row_begin, row_end): centroid of the class + isotropic Gaussian noise.
void generate_feature_chunk(const Model& m, const std::vector<float>& centroids,
                            const GenerateOptions& o, int64_t chunk, int64_t row_begin,
                            int64_t row_end, float* out) {
  Rng rng(stream_key(o.seed, kFeatures, static_cast<uint64_t>(chunk)));
  NormalSource normal(rng);
  // Noise per entry scaled so that 1/feature_noise is the signal-to-noise ratio of telling
  // two classes apart, whatever feat_dim: centroids are sqrt(2 * feat_dim) apart.
  const double scale = o.feature_noise * std::sqrt(static_cast<double>(o.feat_dim) / 2.0);
  const int64_t f = o.feat_dim;
  for (int64_t v = row_begin; v < row_end; ++v) {
    const float* c = centroids.data() + m.label[v] * f;
    float* row = out + (v - row_begin) * f;
    for (int64_t j = 0; j < f; ++j) row[j] = static_cast<float>(c[j] + scale * normal.next());
  }
}

int64_t classes_present(const GenerateOptions& o) {
  int64_t max_class = -1;
  for (int64_t b = 0; b < o.nodes && max_class < o.classes - 1; b += kNodeChunk) {
    Rng classes(stream_key(o.seed, kClasses, static_cast<uint64_t>(b / kNodeChunk)));
    for (int64_t v = b; v < std::min(o.nodes, b + kNodeChunk); ++v)
      max_class = std::max(max_class,
                           static_cast<int64_t>(classes.below(static_cast<uint64_t>(o.classes))));
  }
  return max_class + 1;
}

std::vector<float> centroids(const GenerateOptions& o) {
  std::vector<float> c(static_cast<size_t>(o.classes * o.feat_dim));
  Rng rng(stream_key(o.seed, kCentroids));
  NormalSource normal(rng);
  for (float& x : c) x = static_cast<float>(normal.next());
  return c;
}

}  // namespace dcsbm

void validate_class_model(const ClassModelFlags& f) {
  PARTITA_CHECK_PARAM(f.feat_dim >= 1 && f.feat_dim <= (int64_t{1} << 20), "feat_dim",
                      "must be in [1, 1048576], got {}", f.feat_dim);
  PARTITA_CHECK_PARAM(f.feat_dim <= (int64_t{1} << 36) / f.items, "feat_dim",
                      "{} x `feat_dim` = {} values is too many (limit 2^36)", f.items_name,
                      static_cast<double>(f.items) * static_cast<double>(f.feat_dim));
  PARTITA_CHECK_PARAM(f.classes >= 2 && f.classes <= std::min<int64_t>(f.items, 1 << 16), "classes",
                      "must be in [2, min({}, 65536)], got {}", f.items_bound, f.classes);
  PARTITA_CHECK_PARAM(f.classes <= (int64_t{1} << 26) / f.feat_dim, "classes",
                      "`classes` x `feat_dim` = {} centroid values is too many (limit 2^26)",
                      f.classes * f.feat_dim);
  PARTITA_CHECK_PARAM(std::isfinite(f.homophily) && f.homophily >= 0 && f.homophily <= 1,
                      "homophily", "must be in [0, 1], got {}", f.homophily);
  PARTITA_CHECK_PARAM(std::isfinite(f.power_law) && f.power_law > 1, "power_law",
                      "must be > 1, got {}", f.power_law);
  PARTITA_CHECK_PARAM(std::isfinite(f.feature_noise) && f.feature_noise >= 0, "feature_noise",
                      "must be >= 0, got {}", f.feature_noise);
}

int64_t write_sorted_ids(const std::string& path, std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  write_npy<int64_t>(path, ids);
  return static_cast<int64_t>(fs::file_size(path));
}

int64_t write_random_split(const std::string& dir, int64_t n, uint64_t stream,
                           const SplitSizes& sizes) {
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) perm[v] = v;
  Rng rng(stream);
  for (int64_t i = n - 1; i > 0; --i) {
    std::swap(perm[i], perm[rng.below(static_cast<uint64_t>(i) + 1)]);
  }
  const auto train_end = perm.begin() + sizes.train;
  const auto valid_end = train_end + sizes.valid;
  const auto test_end = valid_end + sizes.test;
  return write_sorted_ids(dir + "train_idx.npy", {perm.begin(), train_end}) +
         write_sorted_ids(dir + "valid_idx.npy", {train_end, valid_end}) +
         write_sorted_ids(dir + "test_idx.npy", {valid_end, test_end});
}

SplitSizes split_sizes(const GenerateOptions& o) {
  SplitSizes s;
  s.train = std::min(o.nodes, fraction_of(o.train_fraction, o.nodes));
  s.valid = std::min(o.nodes - s.train, fraction_of(o.valid_fraction, o.nodes));
  s.test = std::min(o.nodes - s.train - s.valid, fraction_of(o.test_fraction, o.nodes));
  const double sum = o.train_fraction + o.valid_fraction + o.test_fraction;
  if (std::abs(sum - 1) <= kFractionSumTolerance) {
    // Every node in a split: the rounding remainder goes to the last split asked for.
    const int64_t rest = o.nodes - s.train - s.valid - s.test;
    (o.test_fraction > 0 ? s.test : o.valid_fraction > 0 ? s.valid : s.train) += rest;
  }
  return s;
}

namespace {

// One optional array (GenerateOptions::edge_time ...): `rows` rows of `width` values, chunk c
// of `chunk` rows drawn by value(rng) from the stream (seed, purpose, c). Returns its size.
template <class T, class Value>
int64_t write_drawn(const std::string& path, const GenerateOptions& o, Purpose purpose,
                    int64_t rows, int64_t width, int64_t chunk, int threads, Value value) {
  NpyWriter writer(path, dtype_of<T>(),
                   width > 0 ? std::vector<int64_t>{rows, width} : std::vector<int64_t>{rows});
  const int64_t w = std::max<int64_t>(width, 1);
  generate_batched<T>(
      rows, chunk, w, threads,
      [&](int64_t c, int64_t b, int64_t e, T* out) {
        Rng rng(stream_key(o.seed, purpose, static_cast<uint64_t>(c)));
        for (int64_t i = 0; i < (e - b) * w; ++i) out[i] = value(rng);
      },
      [&](const void* data, size_t bytes) { writer.write(data, bytes); });
  writer.finish();
  return static_cast<int64_t>(fs::file_size(path));
}

int64_t write_optional_arrays(const GenerateOptions& o, const std::string& dir, int64_t edges,
                              int threads) {
  int64_t bytes = 0;
  auto time = [](Rng& rng) { return static_cast<int64_t>(rng.below(kGeneratedTimes)); };
  if (o.edge_time)
    bytes += write_drawn<int64_t>(dir + "edge_time.npy", o, kEdgeTime, edges, 0, kEdgeChunk,
                                  threads, time);
  if (o.edge_weight)
    bytes +=
        write_drawn<float>(dir + "edge_weight.npy", o, kEdgeWeight, edges, 0, kEdgeChunk, threads,
                           [](Rng& rng) { return static_cast<float>(0.5 + rng.uniform()); });
  if (o.edge_feat_dim > 0) {
    const int64_t chunk = std::max<int64_t>(1, kEdgeChunk / o.edge_feat_dim);
    bytes += write_drawn<float>(dir + "edge_feat.npy", o, kEdgeFeat, edges, o.edge_feat_dim, chunk,
                                threads, [](Rng& rng) { return static_cast<float>(rng.normal()); });
  }
  if (o.node_time)
    bytes += write_drawn<int64_t>(dir + "node_time.npy", o, kNodeTime, o.nodes, 0, kNodeChunk,
                                  threads, time);
  return bytes;
}

}  // namespace

GenerateStats generate_synthetic(const GenerateOptions& options) {
  validate(options);
  const GenerateOptions& o = options;
  Stopwatch watch;
  const int threads = resolve_threads(o.threads);
  create_directory(o.out_dir);
  const std::string dir = o.out_dir + "/";
  const int64_t num_edges =
      static_cast<int64_t>(std::llround(static_cast<double>(o.nodes) * o.avg_degree));
  GenerateStats stats;
  stats.nodes = o.nodes;
  stats.edges = num_edges;

  Stopwatch phase;
  const Model model = build_model(o, threads);
  write_npy<int64_t>(dir + "label.npy", model.label);
  stats.bytes_written += static_cast<int64_t>(fs::file_size(dir + "label.npy"));
  stats.model_s = phase.seconds();

  phase.restart();
  {
    NpyWriter writer(dir + "edges.npy", DType::kInt64, {num_edges, 2});
    generate_batched<int64_t>(
        num_edges, kEdgeChunk, 2, threads,
        [&](int64_t chunk, int64_t b, int64_t e, int64_t* out) {
          generate_edge_chunk(model, o, chunk, e - b, out);
        },
        [&](const void* data, size_t bytes) { writer.write(data, bytes); });
    writer.finish();
    stats.bytes_written += static_cast<int64_t>(fs::file_size(dir + "edges.npy"));
  }
  stats.edges_s = phase.seconds();

  phase.restart();
  {
    const std::vector<float> centroids = dcsbm::centroids(o);
    const int64_t rows_per_chunk = feature_chunk_rows(o.feat_dim);
    NpyWriter writer(dir + "feat.npy", DType::kFloat32, {o.nodes, o.feat_dim});
    generate_batched<float>(
        o.nodes, rows_per_chunk, o.feat_dim, threads,
        [&](int64_t chunk, int64_t b, int64_t e, float* out) {
          generate_feature_chunk(model, centroids, o, chunk, b, e, out);
        },
        [&](const void* data, size_t bytes) { writer.write(data, bytes); });
    writer.finish();
    stats.bytes_written += static_cast<int64_t>(fs::file_size(dir + "feat.npy"));
  }
  stats.features_s = phase.seconds();

  stats.bytes_written += write_optional_arrays(o, dir, num_edges, threads);

  // Random split from one seeded permutation (Fisher-Yates over all nodes, whatever the
  // fractions, so they only choose where the permutation is cut): train, valid, test, then
  // the nodes in no split.
  phase.restart();
  stats.split = split_sizes(o);
  stats.bytes_written += write_random_split(dir, o.nodes, stream_key(o.seed, kSplit), stats.split);

  stats.split_s = phase.seconds();
  stats.seconds = watch.seconds();
  log_info(
      "{}: generated {} nodes ({} train, {} valid, {} test), {} edges, {} features, {} classes "
      "({}) in {:.2f} s (model {:.2f}, edges {:.2f}, features {:.2f}, split {:.2f})",
      o.out_dir, o.nodes, stats.split.train, stats.split.valid, stats.split.test, num_edges,
      o.feat_dim, o.classes, format_bytes(static_cast<double>(stats.bytes_written)), stats.seconds,
      stats.model_s, stats.edges_s, stats.features_s, stats.split_s);
  return stats;
}

}  // namespace partita::data
