// Mag-shaped heterogeneous graphs in the Partita numpy heterogeneous layout.
//
// Model: every node of every type has a class (papers: their label; authors, fields and
// institutions: the class they are "about") drawn uniformly, and a Pareto weight theta
// (power-law degrees). An edge of relation H -> T draws its source from H with probability
// proportional to theta, then its destination from T's nodes of the source's class with
// probability `homophily` (else from all of T), again proportional to theta; cites never
// draws a self loop. Paper features are the class centroid plus Gaussian noise.
//
// Determinism and memory as in generate.cc: streams keyed by (seed, purpose, type or
// relation, chunk), fixed chunk sizes, chunks written in order; per-node tables plus a
// bounded batch of chunks, whatever the edge count.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "alias_table.h"
#include "generate_util.h"
#include "partita/core/directory.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/npy.h"
#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"

namespace partita::data {
namespace {

namespace fs = std::filesystem;

// Stream purposes (part of every stream key; changing one changes the output).
// The optional arrays' come after the others, which keep their streams.
enum Purpose : uint64_t {
  kClasses = 1,
  kTheta,
  kCentroids,
  kEdges,
  kFeatures,
  kSplit,
  kEdgeTime,
  kEdgeWeight,
  kEdgeFeat,
  kNodeTime
};

constexpr int64_t kNodeChunk = int64_t{1} << 16;
constexpr int64_t kEdgeChunk = int64_t{1} << 18;
constexpr int64_t kFeatureChunkValues = int64_t{1} << 18;
constexpr int kMaxRedraws = 64;

enum Type { kAuthor = 0, kField, kInstitution, kPaper, kNumTypes };
const char* const kTypeNames[kNumTypes] = {"author", "field_of_study", "institution", "paper"};

struct RelationShape {
  Type src, dst;
  const char* name;
  int64_t full_edges;
};
const RelationShape kRelations[] = {
    {kAuthor, kInstitution, "affiliated_with", MagShape::kAffiliatedWith},
    {kAuthor, kPaper, "writes", MagShape::kWrites},
    {kPaper, kPaper, "cites", MagShape::kCites},
    {kPaper, kField, "has_topic", MagShape::kHasTopic},
};

// One node type's sampling tables: draws by theta over the type and within each class.
struct TypeModel {
  int64_t count = 0;
  std::vector<uint16_t> cls;              // class of each node
  std::vector<AliasSlot> global;          // [count], tags = classes
  std::vector<int64_t> community_offset;  // [classes + 1] into `community`
  std::vector<AliasSlot> community;       // [count], grouped by class
};

TypeModel build_type(const HeteroGenerateOptions& o, Type type, int64_t count, int threads) {
  TypeModel m;
  m.count = count;
  m.cls.resize(static_cast<size_t>(count));
  std::vector<double> theta(static_cast<size_t>(count));
  const double cap = std::max(1.0, std::sqrt(static_cast<double>(count)));
  const double exponent = -1.0 / (o.power_law - 1.0);
  parallel_chunks(0, count, kNodeChunk, threads, [&](int64_t b, int64_t e) {
    const uint64_t chunk = static_cast<uint64_t>(b / kNodeChunk);
    Rng classes(stream_key(o.seed, kClasses, type, chunk));
    Rng weights(stream_key(o.seed, kTheta, type, chunk));
    for (int64_t v = b; v < e; ++v) {
      m.cls[v] = static_cast<uint16_t>(classes.below(static_cast<uint64_t>(o.classes)));
      theta[v] = std::min(cap, std::pow(1.0 - weights.uniform(), exponent));
    }
  });
  std::vector<uint32_t> ids(static_cast<size_t>(count));
  for (int64_t v = 0; v < count; ++v) ids[v] = static_cast<uint32_t>(v);
  m.global.resize(static_cast<size_t>(count));
  build_alias_slots(theta.data(), ids.data(), m.cls.data(), count, m.global.data());

  m.community_offset.assign(static_cast<size_t>(o.classes) + 1, 0);
  for (uint16_t c : m.cls) ++m.community_offset[c + 1];
  for (int64_t c = 0; c < o.classes; ++c) m.community_offset[c + 1] += m.community_offset[c];
  std::vector<int64_t> cursor(m.community_offset.begin(), m.community_offset.end() - 1);
  std::vector<double> member_theta(static_cast<size_t>(count));
  for (int64_t v = 0; v < count; ++v) {
    const int64_t at = cursor[m.cls[v]]++;
    ids[at] = static_cast<uint32_t>(v);
    member_theta[at] = theta[v];
  }
  m.community.resize(static_cast<size_t>(count));
  for (int64_t c = 0; c < o.classes; ++c) {
    const int64_t b = m.community_offset[c], n = m.community_offset[c + 1] - b;
    if (n > 0)
      build_alias_slots(member_theta.data() + b, ids.data() + b, nullptr, n, &m.community[b]);
  }
  return m;
}

// Edges [first, first + count) of relation `r` (chunk `chunk`), type-local ids.
void generate_relation_chunk(const HeteroGenerateOptions& o, int r, const TypeModel& src,
                             const TypeModel& dst, int64_t chunk, int64_t count, int64_t* out) {
  Rng rng(stream_key(o.seed, kEdges, static_cast<uint64_t>(r), static_cast<uint64_t>(chunk)));
  const bool same_type = &src == &dst;
  const uint64_t ns = static_cast<uint64_t>(src.count), nd = static_cast<uint64_t>(dst.count);
  for (int64_t i = 0; i < count; ++i) {
    const AliasSlot& s = src.global[rng.below(ns)];
    const bool keep = alias_keeps(s, static_cast<float>(rng.uniform()));
    const uint32_t from = keep ? s.keep : s.alias;
    const int64_t c = keep ? s.keep_tag : s.alias_tag;
    const int64_t offset = dst.community_offset[c];
    const uint64_t size = static_cast<uint64_t>(dst.community_offset[c + 1] - offset);
    const bool inside = rng.uniform() < o.homophily && size > (same_type ? 1u : 0u);
    const AliasSlot* table = inside ? dst.community.data() + offset : dst.global.data();
    const uint64_t n = inside ? size : nd;
    uint32_t to = draw_alias(table, n, rng);
    if (same_type) {
      for (int tries = 0; to == from && tries < kMaxRedraws; ++tries)
        to = draw_alias(table, n, rng);
      while (to == from) to = table[rng.below(n)].keep;  // the source dominates its table
    }
    out[2 * i] = from;
    out[2 * i + 1] = to;
  }
}

void check_nodes(const HeteroGenerateOptions& o) {
  PARTITA_CHECK_PARAM(o.nodes >= 100 && o.nodes <= std::numeric_limits<int32_t>::max(), "nodes",
                      "must be in [100, 2147483647] with `shape`, got {}", o.nodes);
}

void validate(const HeteroGenerateOptions& o, int64_t papers) {
  PARTITA_CHECK_PARAM(o.shape == "mag", "shape", "unknown shape '{}' (available: mag)", o.shape);
  PARTITA_CHECK_PARAM(!o.out_dir.empty(), "out_dir", "an output directory is required");
  check_nodes(o);
  PARTITA_CHECK_PARAM(o.edge_feat_dim >= 0 && o.edge_feat_dim <= (int64_t{1} << 16),
                      "edge_feat_dim", "must be in [0, 65536], got {}", o.edge_feat_dim);
  validate_class_model({papers, "papers", fmt::format("papers = {}", papers), o.feat_dim, o.classes,
                        o.homophily, o.power_law, o.feature_noise});
}

GenerateOptions paper_split_options(const HeteroGenerateOptions& o, int64_t papers) {
  GenerateOptions g;
  g.nodes = papers;
  g.train_fraction = o.train_fraction;
  g.valid_fraction = o.valid_fraction;
  g.test_fraction = o.test_fraction;
  return g;
}

int64_t file_size(const std::string& path) { return static_cast<int64_t>(fs::file_size(path)); }

// One optional array file: `rows` rows of `width` values (0: a vector), chunk c of `chunk`
// rows drawn by value(rng) from the stream (seed, purpose, index, c). Returns its size.
template <class T, class Value>
int64_t write_drawn(const std::string& path, const HeteroGenerateOptions& o, Purpose purpose,
                    uint64_t index, int64_t rows, int64_t width, int64_t chunk, int threads,
                    Value value) {
  NpyWriter writer(path, dtype_of<T>(),
                   width > 0 ? std::vector<int64_t>{rows, width} : std::vector<int64_t>{rows});
  const int64_t w = std::max<int64_t>(width, 1);
  generate_batched<T>(
      rows, chunk, w, threads,
      [&](int64_t c, int64_t b, int64_t e, T* out) {
        Rng rng(stream_key(o.seed, purpose, index, static_cast<uint64_t>(c)));
        for (int64_t i = 0; i < (e - b) * w; ++i) out[i] = value(rng);
      },
      [&](const void* data, size_t bytes) { writer.write(data, bytes); });
  writer.finish();
  return static_cast<int64_t>(fs::file_size(path));
}

// The asked-for optional arrays: per relation (edge counts `edges`) and per node type.
int64_t write_typed_arrays(const HeteroGenerateOptions& o, const std::string& dir,
                           const std::vector<int64_t>& edges, const int64_t* counts, int threads) {
  int64_t bytes = 0;
  auto folder = [&](const char* name) {
    create_directory(dir + name);
    return dir + name + "/";
  };
  auto time = [](Rng& rng) { return static_cast<int64_t>(rng.below(kGeneratedTimes)); };
  for (int r = 0; r < 4; ++r) {
    const RelationShape& shape = kRelations[r];
    const std::string file = std::string(kTypeNames[shape.src]) + "___" + shape.name + "___" +
                             kTypeNames[shape.dst] + ".npy";
    const uint64_t index = static_cast<uint64_t>(r);
    if (o.edge_time)
      bytes += write_drawn<int64_t>(folder("edge_time") + file, o, kEdgeTime, index, edges[r], 0,
                                    kEdgeChunk, threads, time);
    if (o.edge_weight)
      bytes += write_drawn<float>(folder("edge_weight") + file, o, kEdgeWeight, index, edges[r], 0,
                                  kEdgeChunk, threads,
                                  [](Rng& rng) { return static_cast<float>(0.5 + rng.uniform()); });
    if (o.edge_feat_dim > 0)
      bytes +=
          write_drawn<float>(folder("edge_feat") + file, o, kEdgeFeat, index, edges[r],
                             o.edge_feat_dim, std::max<int64_t>(1, kEdgeChunk / o.edge_feat_dim),
                             threads, [](Rng& rng) { return static_cast<float>(rng.normal()); });
  }
  for (int t = 0; t < kNumTypes && o.node_time; ++t)
    bytes +=
        write_drawn<int64_t>(folder("node_time") + kTypeNames[t] + ".npy", o, kNodeTime,
                             static_cast<uint64_t>(t), counts[t], 0, kNodeChunk, threads, time);
  return bytes;
}

}  // namespace

std::vector<int64_t> mag_type_counts(int64_t nodes) {
  auto share = [&](int64_t full) { return std::max<int64_t>(1, nodes * full / MagShape::kNodes); };
  std::vector<int64_t> counts(kNumTypes);
  counts[kAuthor] = share(MagShape::kAuthors);
  counts[kField] = share(MagShape::kFields);
  counts[kInstitution] = share(MagShape::kInstitutions);
  counts[kPaper] = nodes - counts[kAuthor] - counts[kField] - counts[kInstitution];
  return counts;
}

std::vector<int64_t> mag_relation_edges(int64_t nodes) {
  std::vector<int64_t> edges;
  for (const RelationShape& r : kRelations) {
    edges.push_back(
        std::max<int64_t>(1, (nodes * r.full_edges + MagShape::kNodes / 2) / MagShape::kNodes));
  }
  return edges;
}

HeteroGenerateStats generate_hetero(const HeteroGenerateOptions& options) {
  const HeteroGenerateOptions& o = options;
  check_nodes(o);  // before the type counts are derived from it
  const std::vector<int64_t> counts = mag_type_counts(o.nodes);
  const int64_t papers = counts[kPaper];
  validate(o, papers);
  const GenerateOptions split_options = paper_split_options(o, papers);
  validate_split_fractions(split_options);

  Stopwatch watch;
  const int threads = resolve_threads(o.threads);
  for (const char* sub : {"", "/edges", "/feat"}) create_directory(o.out_dir + sub);
  const std::string dir = o.out_dir + "/";
  HeteroGenerateStats stats;
  for (int t = 0; t < kNumTypes; ++t) {
    stats.type_names.push_back(kTypeNames[t]);
    stats.type_counts.push_back(counts[t]);
  }

  {
    std::string types, relations;
    for (int t = 0; t < kNumTypes; ++t) {
      types += fmt::format("{}\n    {{\"name\": \"{}\", \"count\": {}}}", t == 0 ? "" : ",",
                           kTypeNames[t], counts[t]);
    }
    for (const RelationShape& r : kRelations) {
      relations += fmt::format("{}\n    [\"{}\", \"{}\", \"{}\"]", relations.empty() ? "" : ",",
                               kTypeNames[r.src], r.name, kTypeNames[r.dst]);
    }
    std::ofstream out(dir + "hetero.json", std::ios::binary | std::ios::trunc);
    out << fmt::format(
        "{{\n  \"node_types\": [{}\n  ],\n  \"relations\": [{}\n  ],\n"
        "  \"target\": \"paper\"\n}}\n",
        types, relations);
    out.close();
    PARTITA_CHECK(out.good(), IoError, "{}hetero.json: cannot write", dir);
    stats.bytes_written += file_size(dir + "hetero.json");
  }

  std::vector<TypeModel> models;
  for (int t = 0; t < kNumTypes; ++t) {
    models.push_back(build_type(o, static_cast<Type>(t), counts[t], threads));
  }
  log_info(
      "{}: mag-shaped graph: {} nodes (author {}, field_of_study {}, institution {}, paper "
      "{}), {} classes; model built in {:.2f} s",
      o.out_dir, o.nodes, counts[kAuthor], counts[kField], counts[kInstitution], papers, o.classes,
      watch.seconds());
  {
    std::vector<int64_t> labels(models[kPaper].cls.begin(), models[kPaper].cls.end());
    write_npy<int64_t>(dir + "label.npy", labels);
    stats.bytes_written += file_size(dir + "label.npy");
  }

  const std::vector<int64_t> edges = mag_relation_edges(o.nodes);
  for (int r = 0; r < 4; ++r) {
    Stopwatch phase;
    const RelationShape& shape = kRelations[r];
    const std::string triplet =
        std::string(kTypeNames[shape.src]) + "___" + shape.name + "___" + kTypeNames[shape.dst];
    const std::string path = dir + "edges/" + triplet + ".npy";
    NpyWriter writer(path, DType::kInt64, {edges[r], 2});
    generate_batched<int64_t>(
        edges[r], kEdgeChunk, 2, threads,
        [&](int64_t chunk, int64_t b, int64_t e, int64_t* out) {
          generate_relation_chunk(o, r, models[shape.src], models[shape.dst], chunk, e - b, out);
        },
        [&](const void* data, size_t bytes) { writer.write(data, bytes); });
    writer.finish();
    stats.relation_names.push_back(triplet);
    stats.relation_edges.push_back(edges[r]);
    stats.bytes_written += file_size(path);
    log_info("{}: {} edges of {} in {:.2f} s", o.out_dir, edges[r], triplet, phase.seconds());
  }

  {
    Stopwatch phase;
    const TypeModel& paper = models[kPaper];
    std::vector<float> centroids(static_cast<size_t>(o.classes * o.feat_dim));
    Rng rng(stream_key(o.seed, kCentroids));
    NormalSource normal(rng);
    for (float& x : centroids) x = static_cast<float>(normal.next());
    const double scale = o.feature_noise * std::sqrt(static_cast<double>(o.feat_dim) / 2.0);
    const int64_t f = o.feat_dim;
    const int64_t rows_per_chunk = std::max<int64_t>(1, kFeatureChunkValues / f);
    const std::string path = dir + "feat/paper.npy";
    NpyWriter writer(path, DType::kFloat32, {papers, f});
    generate_batched<float>(
        papers, rows_per_chunk, f, threads,
        [&](int64_t chunk, int64_t b, int64_t e, float* out) {
          Rng chunk_rng(stream_key(o.seed, kFeatures, static_cast<uint64_t>(chunk)));
          NormalSource noise(chunk_rng);
          for (int64_t v = b; v < e; ++v) {
            const float* c = centroids.data() + paper.cls[v] * f;
            float* row = out + (v - b) * f;
            for (int64_t j = 0; j < f; ++j)
              row[j] = static_cast<float>(c[j] + scale * noise.next());
          }
        },
        [&](const void* data, size_t bytes) { writer.write(data, bytes); });
    writer.finish();
    stats.bytes_written += file_size(path);
    log_info("{}: {} x {} paper features in {:.2f} s", o.out_dir, papers, f, phase.seconds());
  }

  stats.bytes_written += write_typed_arrays(o, dir, edges, counts.data(), threads);
  stats.split = split_sizes(split_options);
  stats.bytes_written += write_random_split(dir, papers, stream_key(o.seed, kSplit), stats.split);
  stats.seconds = watch.seconds();
  int64_t total_edges = 0;
  for (int64_t e : edges) total_edges += e;
  log_info("{}: generated {} nodes, {} edges, papers split {}/{}/{} ({}) in {:.2f} s", o.out_dir,
           o.nodes, total_edges, stats.split.train, stats.split.valid, stats.split.test,
           format_bytes(static_cast<double>(stats.bytes_written)), stats.seconds);
  return stats;
}

}  // namespace partita::data
