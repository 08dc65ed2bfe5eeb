// partita generate: synthetic dataset in the numpy layout, or (--hetero mag) a mag-shaped
// heterogeneous one in the numpy heterogeneous layout, or (--layout chunked, also under
// mpirun with each rank writing its own chunks) in the chunked layout; --shape papers100m
// sizes it like ogbn-papers100M.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "commands.h"
#include "launcher_env.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/timer.h"
#include "partita/data/generate.h"
#include "partita/data/generate_chunked.h"
#include "partita/runtime/job_collectives.h"
#include "rank_main.h"

namespace partita::cli {
namespace {

// How long a rank that finished its chunks waits for the others (the slowest rank's share).
constexpr double kShareWaitSeconds = 7 * 24 * 3600.0;

struct ChunkFlags {
  std::string layout;   // "", numpy or chunked
  std::string shape;    // "" or papers100m
  double scale = 0.01;  // --shape papers100m
  int64_t chunk_rows = data::ChunkedWriteOptions{}.chunk_rows;
  int64_t node_chunk_rows = data::ChunkedWriteOptions{}.node_chunk_rows;
  std::string feature_dtype;  // "": float32 (bfloat16 for --shape papers100m)
  std::string from_ogb;       // convert this OGB directory instead of generating
};

// The options of --shape papers100m: the shape's, then any model flag given explicitly.
data::GenerateOptions shape_options(const CLI::App& app, const data::GenerateOptions& flags,
                                    const ChunkFlags& chunk) {
  PARTITA_CHECK(chunk.shape == "papers100m", UsageError,
                "--shape: '{}' is not a known shape (papers100m)", chunk.shape);
  for (const char* flag : {"--nodes", "--avg-degree"})
    PARTITA_CHECK(app.count(flag) == 0, UsageError,
                  "{}: does not apply with --shape (use --scale; the shape fixes nodes and edges)",
                  flag);
  data::GenerateOptions o = data::papers100m_options(chunk.scale);
  o.out_dir = flags.out_dir;
  o.seed = flags.seed;
  o.threads = flags.threads;
  if (app.count("--feat-dim") > 0) o.feat_dim = flags.feat_dim;
  if (app.count("--classes") > 0) o.classes = flags.classes;
  if (app.count("--homophily") > 0) o.homophily = flags.homophily;
  if (app.count("--power-law") > 0) o.power_law = flags.power_law;
  if (app.count("--feature-noise") > 0) o.feature_noise = flags.feature_noise;
  if (app.count("--train-fraction") > 0) o.train_fraction = flags.train_fraction;
  if (app.count("--valid-fraction") > 0) o.valid_fraction = flags.valid_fraction;
  if (app.count("--test-fraction") > 0) o.test_fraction = flags.test_fraction;
  return o;
}

// One rank's part of a chunked generate: its chunks, a wait for every rank, then rank 0
// writes manifest.json and prints the summary with every rank's peak memory.
int run_chunked(runtime::RankContext& rank, data::GenerateOptions o,
                const data::ChunkedWriteOptions& chunked) {
  Stopwatch watch;
  if (o.threads <= 0) o.threads = rank.cores_per_rank();
  std::unique_ptr<Collectives> job;
  if (rank.size() > 1) job = runtime::mpi_job_collectives(kShareWaitSeconds);
  const data::GenerateStats stats =
      data::generate_chunked_share(o, chunked, rank.rank(), rank.size());
  std::vector<int64_t> totals = {stats.edges, stats.bytes_written};
  std::vector<int64_t> peaks = {peak_rss_bytes()};
  if (job != nullptr) {
    job->barrier();  // every rank's chunks are complete
    job->allreduce_sum(totals);
    peaks = job->allgather(peaks);
  }
  if (rank.rank() != 0) return 0;
  totals[1] += data::write_chunked_manifest(o.out_dir, data::chunked_generate_manifest(o, chunked));
  std::string peak_text;
  for (size_t r = 0; r < peaks.size(); ++r)
    peak_text += (r > 0 ? ", " : "") + format_bytes(static_cast<double>(peaks[r]));
  std::printf(
      "generated %s (chunked layout, %d rank(s)): %lld nodes, %lld edges, %s features, %s "
      "written in %.2f s; peak RSS per rank: %s\n",
      o.out_dir.c_str(), rank.size(), static_cast<long long>(o.nodes),
      static_cast<long long>(totals[0]), dtype_name(chunked.feature_dtype),
      format_bytes(static_cast<double>(totals[1])).c_str(), watch.seconds(), peak_text.c_str());
  std::fflush(stdout);
  return 0;
}

// The chunked layout's write options from the flags; `dtype` the feature type when
// --feature-dtype is not given.
data::ChunkedWriteOptions chunked_options(const CLI::App& app, const ChunkFlags& chunk,
                                          const std::string& dtype) {
  data::ChunkedWriteOptions chunked;
  chunked.chunk_rows = chunk.chunk_rows;
  chunked.node_chunk_rows = app.count("--node-chunk-rows") > 0 ? chunk.node_chunk_rows
                            : app.count("--chunk-rows") > 0    ? chunk.chunk_rows
                                                               : chunk.node_chunk_rows;
  chunked.feature_dtype = value_named(feature_dtype_names(), "--feature-dtype",
                                      chunk.feature_dtype.empty() ? dtype : chunk.feature_dtype);
  return chunked;
}

// --hetero mag: the mag-shaped graph in the numpy heterogeneous layout.
int run_hetero(const CLI::App& app, const data::GenerateOptions& options,
               const std::string& shape) {
  data::HeteroGenerateOptions h;
  h.shape = shape;
  h.out_dir = options.out_dir;
  h.seed = options.seed;
  h.threads = options.threads;
  h.power_law = options.power_law;
  h.feature_noise = options.feature_noise;
  h.train_fraction = options.train_fraction;
  h.valid_fraction = options.valid_fraction;
  h.test_fraction = options.test_fraction;
  h.edge_time = options.edge_time;
  h.edge_weight = options.edge_weight;
  h.edge_feat_dim = options.edge_feat_dim;
  h.node_time = options.node_time;
  // Flags given override the shape's own defaults.
  if (app.count("--nodes") > 0) h.nodes = options.nodes;
  if (app.count("--feat-dim") > 0) h.feat_dim = options.feat_dim;
  if (app.count("--classes") > 0) h.classes = options.classes;
  if (app.count("--homophily") > 0) h.homophily = options.homophily;
  data::HeteroGenerateStats stats = data::generate_hetero(h);
  int64_t edges = 0;
  for (int64_t e : stats.relation_edges) edges += e;
  int64_t nodes = 0;
  for (int64_t n : stats.type_counts) nodes += n;
  std::printf(
      "generated %s: %lld nodes of %zu types, %lld edges of %zu relations, %s written "
      "in %.2f s\n",
      h.out_dir.c_str(), static_cast<long long>(nodes), stats.type_counts.size(),
      static_cast<long long>(edges), stats.relation_edges.size(),
      format_bytes(static_cast<double>(stats.bytes_written)).c_str(), stats.seconds);
  return 0;
}

// --from-ogb: an OGB raw directory converted to the chunked layout.
int run_from_ogb(const CLI::App& app, const data::GenerateOptions& options,
                 const ChunkFlags& chunk) {
  PARTITA_CHECK(chunk.shape.empty() && (chunk.layout.empty() || chunk.layout == "chunked"),
                UsageError,
                "--from-ogb: converts to the chunked layout; --shape and --layout {} do not "
                "apply",
                chunk.layout.empty() ? "numpy" : chunk.layout);
  const data::ChunkedWriteOptions chunked = chunked_options(app, chunk, "float32");
  const data::GenerateStats stats =
      data::convert_ogb_to_chunked(chunk.from_ogb, options.out_dir, chunked);
  std::printf(
      "converted %s to %s (chunked layout): %lld nodes, %lld edges, %s written in "
      "%.2f s; peak RSS %s\n",
      chunk.from_ogb.c_str(), options.out_dir.c_str(), static_cast<long long>(stats.nodes),
      static_cast<long long>(stats.edges),
      format_bytes(static_cast<double>(stats.bytes_written)).c_str(), stats.seconds,
      format_bytes(static_cast<double>(peak_rss_bytes())).c_str());
  return 0;
}

// The command: the flags checked against each other, then the graph of the layout asked.
int run_generate(const CLI::App& app, data::GenerateOptions& options, const std::string& hetero,
                 const ChunkFlags& chunk, const CLI::Option& avg_degree) {
  const bool chunk_flags = !chunk.layout.empty() || !chunk.shape.empty() ||
                           !chunk.from_ogb.empty() || app.count("--chunk-rows") > 0 ||
                           app.count("--node-chunk-rows") > 0 || app.count("--feature-dtype") > 0 ||
                           app.count("--scale") > 0;
  if (!hetero.empty() && chunk_flags) {
    throw UsageError(
        "--hetero: the mag shape is written in the numpy heterogeneous layout only (no "
        "--layout, --shape, --scale, --chunk-rows or --feature-dtype)");
  }
  const bool arrays =
      options.edge_time || options.edge_weight || options.edge_feat_dim > 0 || options.node_time;
  PARTITA_CHECK(!arrays || chunk.from_ogb.empty(), UsageError,
                "--edge-time, --edge-weight, --edge-feat-dim, --node-time: do not apply to "
                "--from-ogb");
  const bool chunked_output =
      chunk.from_ogb.empty() &&
      (chunk.layout == "chunked" || (chunk.layout.empty() && !chunk.shape.empty()));
  PARTITA_CHECK(chunked_output || launcher_size() == 1, UsageError,
                "generate: under mpirun only --layout chunked is generated in parts (each rank "
                "its own chunks); the numpy layouts and --from-ogb are written by one process "
                "(run it without mpirun)");
  if (!hetero.empty()) {
    PARTITA_CHECK(avg_degree.count() == 0, UsageError,
                  "--avg-degree: does not apply with --hetero (edges follow ogbn-mag's "
                  "proportions)");
    return run_hetero(app, options, hetero);
  }
  if (!chunk.from_ogb.empty()) return run_from_ogb(app, options, chunk);
  PARTITA_CHECK(!(app.count("--scale") > 0 && chunk.shape.empty()), UsageError,
                "--scale: applies with --shape only");
  const std::string layout = !chunk.layout.empty() ? chunk.layout
                             : chunk.shape.empty() ? "numpy"
                                                   : "chunked";
  PARTITA_CHECK(layout == "numpy" || layout == "chunked", UsageError,
                "--layout: '{}' is not numpy or chunked", layout);
  if (layout == "chunked") {
    const data::ChunkedWriteOptions chunked =
        chunked_options(app, chunk, chunk.shape.empty() ? "float32" : "bfloat16");
    return run_rank([&](runtime::RankContext& rank) {
      const data::GenerateOptions o =
          chunk.shape.empty() ? options : shape_options(app, options, chunk);
      return run_chunked(rank, o, chunked);
    });
  }
  PARTITA_CHECK(app.count("--chunk-rows") == 0 && app.count("--node-chunk-rows") == 0 &&
                    chunk.feature_dtype.empty(),
                UsageError,
                "--chunk-rows, --node-chunk-rows, --feature-dtype: apply to --layout chunked "
                "only (the numpy layout stores float32 features in one file)");
  if (!chunk.shape.empty()) options = shape_options(app, options, chunk);
  data::GenerateStats stats = data::generate_synthetic(options);
  std::printf("generated %s: %lld nodes, %lld edges, %s written in %.2f s\n",
              options.out_dir.c_str(), static_cast<long long>(stats.nodes),
              static_cast<long long>(stats.edges),
              format_bytes(static_cast<double>(stats.bytes_written)).c_str(), stats.seconds);
  return 0;
}

}  // namespace

Action add_generate_command(CLI::App& app) {
  auto options = std::make_shared<data::GenerateOptions>();
  auto hetero = std::make_shared<std::string>();
  app.description(
      "Write a synthetic node-classification graph in the Partita numpy layout "
      "(docs/dataset-format.md): a degree-corrected stochastic block model with power-law "
      "degrees, one community per class, Gaussian features around class centroids, and a "
      "random train/valid/test split (60/20/20 by default). With --hetero mag: a graph shaped "
      "like ogbn-mag (author, field_of_study, institution, paper; affiliated_with, writes, "
      "cites, has_topic in its proportions; features on papers only; classes on papers) in the "
      "numpy heterogeneous layout. With --layout chunked: the same graph in the chunked "
      "layout (manifest.json plus chunk files), also under `mpirun -np R`, each rank writing "
      "its own chunks; --shape papers100m --scale S sizes it like ogbn-papers100M; --from-ogb "
      "converts an OGB directory to the chunked layout instead. The output depends only on "
      "the flags, never on threads or ranks.");
  app.add_option("--out", options->out_dir, "Output directory (created)")->required();
  app.add_option("--hetero", *hetero,
                 "Write a heterogeneous graph of this shape instead (mag: ogbn-mag's types, "
                 "relations and proportions; defaults then: --nodes 100000, --feat-dim 128, "
                 "--classes 349, --homophily 0.8; --avg-degree does not apply)");
  app.add_option("--nodes", options->nodes, "Number of nodes")->capture_default_str();
  CLI::Option* avg_degree =
      app.add_option("--avg-degree", options->avg_degree, "Edges per node (edges = nodes x this)")
          ->capture_default_str();
  app.add_option("--feat-dim", options->feat_dim, "Feature dimension")->capture_default_str();
  app.add_option("--classes", options->classes, "Number of classes")->capture_default_str();
  app.add_option("--seed", options->seed, "Random seed")->capture_default_str();
  app.add_option("--homophily", options->homophily,
                 "Probability that an edge's destination is drawn inside its source's community, "
                 "in [0, 1]")
      ->capture_default_str();
  app.add_option("--power-law", options->power_law, "Exponent of the degree distribution (> 1)")
      ->capture_default_str();
  app.add_option("--feature-noise", options->feature_noise,
                 "Feature noise relative to half the distance between two class centroids (>= 0)")
      ->capture_default_str();
  app.add_option("--train-fraction", options->train_fraction,
                 "Share of the nodes in train_idx.npy, in (0, 1]")
      ->capture_default_str();
  app.add_option("--valid-fraction", options->valid_fraction,
                 "Share of the nodes in valid_idx.npy, in [0, 1]")
      ->capture_default_str();
  app.add_option("--test-fraction", options->test_fraction,
                 "Share of the nodes in test_idx.npy, in [0, 1]. The three fractions sum to at "
                 "most 1: nodes beyond the sum are in no split; when they sum to 1, every node "
                 "is in one (the last split asked for takes the rounding remainder)")
      ->capture_default_str();
  app.add_flag("--edge-time", options->edge_time,
               "Also write edge_time.npy: an int64 time per edge, uniform in [0, 1000)");
  app.add_flag("--edge-weight", options->edge_weight,
               "Also write edge_weight.npy: a float32 weight per edge, uniform in [0.5, 1.5)");
  app.add_option("--edge-feat-dim", options->edge_feat_dim,
                 "Also write edge_feat.npy: float32 [edges, D], standard normal (0: none)")
      ->capture_default_str();
  app.add_flag("--node-time", options->node_time,
               "Also write node_time.npy: an int64 time per node, uniform in [0, 1000)");
  app.add_option("--threads", options->threads,
                 "Threads (0: all cores; under mpirun: the cores of each rank)")
      ->capture_default_str();
  auto chunk = std::make_shared<ChunkFlags>();
  app.add_option("--layout", chunk->layout,
                 "numpy (one file per array) or chunked (manifest.json plus numbered chunk "
                 "files, written piece by piece: run under `mpirun -np R` and each rank writes "
                 "its own chunks, byte-identical for any R; docs/dataset-format.md). Default: "
                 "numpy, chunked with --shape");
  app.add_option("--chunk-rows", chunk->chunk_rows,
                 "Chunked layout: edges per edge chunk file (and nodes per node chunk file "
                 "unless --node-chunk-rows is given)")
      ->capture_default_str();
  app.add_option("--node-chunk-rows", chunk->node_chunk_rows,
                 "Chunked layout: nodes per node chunk file (features, labels)")
      ->capture_default_str();
  app.add_option("--feature-dtype", chunk->feature_dtype,
                 "Chunked layout: stored feature type, float32, float16 or bfloat16 (default "
                 "float32; bfloat16 with --shape papers100m)");
  app.add_option("--shape", chunk->shape,
                 "papers100m: a graph shaped like ogbn-papers100M (111,059,956 nodes, "
                 "1,615,685,872 listed edges, so about 3.2 B directed ones once reversed, 128 "
                 "features, 172 classes, 1.09% / 0.11% / 0.19% train / valid / test nodes, "
                 "power-law degrees) scaled by --scale; chunked layout with bfloat16 features "
                 "unless told otherwise. --scale 0.1 gives 11.1 M nodes and 161.6 M edges "
                 "(2.5 GiB of edges, 2.7 GiB of features)");
  app.add_option("--from-ogb", chunk->from_ogb,
                 "Instead of generating: convert this OGB raw node-property directory "
                 "(raw/*.csv.gz, split/<name>/) to the chunked layout, streaming (one process; "
                 "memory is one chunk), so that `partition` under mpirun can read it in shares");
  app.add_option("--scale", chunk->scale,
                 "With --shape: the fraction of the full graph's nodes and edges, in (0, 1]")
      ->capture_default_str();
  return [options, hetero, chunk, &app, avg_degree] {
    return run_generate(app, *options, *hetero, *chunk, *avg_degree);
  };
}

}  // namespace partita::cli
