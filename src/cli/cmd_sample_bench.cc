// partita sample-bench: distributed sampling + feature fetching throughput, one JSON object.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "device_flag.h"
#include "enum_option.h"
#include "flags.h"
#include "host_local_flag.h"
#include "partita/core/error.h"
#include "partita/core/timer.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/hot_nodes.h"
#include "partita/runtime/rank_job.h"
#include "partita/sample/block_builder.h"
#include "partita/sample/fanout_spec.h"
#include "partita/sample/relation_names.h"
#include "partita/store/feature_cache.h"
#include "partita/train/device.h"
#include "partita/train/device_sampling.h"
#include "partita/train/train_options.h"
#include "partita/train/train_task.h"
#include "rank_main.h"
#include "sampling_rule_flags.h"
#include "topology_flag.h"

namespace partita::cli {
namespace {

// Partition, timeout, sampler threads and --in-memory bind onto the session's options.
struct Flags {
  runtime::SessionOptions session;
  std::string fanouts = "15,10,5";
  int64_t batch_size = 1024;
  int64_t batches = 50;
  uint64_t seed = 0;
  double cache_ratio = 0;
  int64_t cache_presample = 10;
  std::string sample_on = "host";  // host, or device: train's device sampler (--device)
  std::string device = "cpu";
  // --temporal and --temporal-strategy (as train's): flags.session.sampling once settled.
  SamplingRuleFlags rule;
};

// Times each hop of the sampler it wraps.
class TimedSampler final : public sample::NeighborSampler {
 public:
  TimedSampler(sample::NeighborSampler& inner, size_t hops) : inner_(inner), seconds_(hops, 0) {}
  void sample_hop(const sample::HopRequest& request, sample::NeighborSample* out) override {
    Stopwatch watch;
    inner_.sample_hop(request, out);
    seconds_[request.hop] += watch.seconds();
  }
  const std::vector<double>& seconds() const { return seconds_; }

 private:
  sample::NeighborSampler& inner_;
  std::vector<double> seconds_;
};

// True when --fanouts names relations (REL=N, *=N or several entries in a hop).
bool per_relation_fanouts(const std::string& text) {
  return text.find_first_of("=:") != std::string::npos;
}

// Checked before MPI starts: the verdict is the same on every rank, and main() prints it
// once for the whole job. Relation names are resolved against the graph in bench_on.
void check_flags(const Flags& flags) {
  // A plain list keeps the homogeneous messages (e.g. "'0' is not a fanout").
  if (per_relation_fanouts(flags.fanouts))
    sample::parse_fanout_spec(flags.fanouts);
  else
    parse_fanouts(flags.fanouts);
  PARTITA_CHECK(flags.batch_size >= 1, UsageError, "--batch-size: must be >= 1, got {}",
                flags.batch_size);
  PARTITA_CHECK(flags.batches >= 1, UsageError, "--batches: must be >= 1, got {}", flags.batches);
  loader::check_cache_options(flags.cache_ratio, flags.cache_presample);
  resolve_sampler_threads(flags.session.sampling.threads, 1);  // the range check
  check_timeout(flags.session.timeout_s);
  PARTITA_CHECK(flags.session.servers >= 0, UsageError,
                "--servers: must be >= 0 (0: worker mode), got {}", flags.session.servers);
  PARTITA_CHECK(flags.sample_on == "host" || flags.sample_on == "device", UsageError,
                "--sample-on: '{}' is not one of host, device", flags.sample_on);
  // The sampling rule, checked as train checks it, against training options at their
  // defaults (no model here); the partition's arrays: at the session's start
  // (sample::check_sampling_data); node times: bench_on.
  check_sampling_rule_flags(flags.rule, flags.session.sampling);
  train::check_sampling_rule(train::TrainOptions(),
                             sampling_rule(flags.rule, flags.session.sampling));
}

// --sample-on device: train's device sampler over the whole topology (train/device_sampling.h),
// on this rank's --device. Throws UsageError when the rank does not hold the topology.
std::unique_ptr<train::DeviceBlockSource> device_source(runtime::RankContext& rank,
                                                        runtime::Session& session,
                                                        const Flags& flags) {
  if (flags.sample_on != "device") return nullptr;
  PARTITA_CHECK(session.holds_topology(), UsageError,
                "--sample-on device: this rank holds only its own part of {} parts; pass "
                "--topology full (every rank maps every part's in-edges)",
                session.graph().meta().num_parts);
  const train::DeviceSpec spec = rank_device(flags.device, rank);
  const store::DistGraph& graph = session.graph();
  train::DeviceSourceOptions source;
  source.weighted = flags.session.sampling.weighting == sample::Weighting::kEdgeWeight;
  source.temporal = flags.session.sampling.temporal;
  source.strict = flags.session.sampling.strict;
  return std::make_unique<train::DeviceBlockSource>(
      session.topology_views(), graph.typed() ? graph.typed_meta().num_relations() : 0,
      spec.is_cpu() ? torch::Device(torch::kCPU) : train::torch_device(spec), source);
}

// --fanouts resolved against the relation names of `graph` (none for a homogeneous one).
sample::Fanouts resolve_fanouts(const Flags& flags, const store::DistGraph& graph) {
  return sample::resolve_fanouts(flags.fanouts, graph.typed()
                                                    ? sample::relation_names(graph.typed_meta())
                                                    : std::vector<std::string>{});
}

// This rank's batches: consecutive slices of its seeds (its training ids; an even share of
// them in replicated mode, and of every server's in server-client mode), wrapping around.
// --batch-size is global, as in train: this rank's share of it, the first
// (batch_size % ranks) ranks one more. Collective: every rank stops on the same verdict.
std::vector<std::vector<int64_t>> rank_batches(runtime::Session& session, const Flags& flags) {
  const store::DistGraph& graph = session.graph();
  // The ranks that sample: every rank, or the clients (trainers) of server-client mode.
  const int me = session.rank(), ranks = session.size();
  std::vector<int64_t> seeds;
  if (graph.client()) {
    for (const store::SeedId& id : session.job_ids(runtime::Split::kTrain))
      seeds.push_back(id.global);
  } else {
    seeds.assign(graph.train_ids().begin(), graph.train_ids().end());
  }
  if (graph.replicated() || graph.client()) {
    const int64_t n = static_cast<int64_t>(seeds.size());
    const int64_t lo = n * me / ranks, hi = n * (me + 1) / ranks;
    seeds = std::vector<int64_t>(seeds.begin() + lo, seeds.begin() + hi);
  }
  // Every rank stops on the same verdict (a rank stopping alone would leave the others
  // waiting at the first barrier): the lowest rank without training nodes, if any.
  const int64_t idle = session.collectives().allreduce_one(
      seeds.empty() ? int64_t{me} : int64_t{ranks}, ReduceOp::kMin);
  PARTITA_CHECK(idle == ranks, UsageError, "{}: {} {} {} training nodes", flags.session.parts_dir,
                graph.client() ? "client" : "rank", idle, graph.client() ? "gets no" : "owns no");

  PARTITA_CHECK(flags.batch_size >= ranks, UsageError,
                "--batch-size: {} seeds per step cannot be shared by {} sampling ranks (it is "
                "global, summed over the ranks)",
                flags.batch_size, ranks);
  const int64_t rank_batch = flags.batch_size / ranks + (me < flags.batch_size % ranks ? 1 : 0);
  std::vector<std::vector<int64_t>> batches;
  for (int64_t b = 0; b < flags.batches; ++b) {
    const int64_t start = (b * rank_batch) % static_cast<int64_t>(seeds.size());
    const int64_t count = std::min<int64_t>(rank_batch, seeds.size() - start);
    batches.emplace_back(seeds.begin() + start, seeds.begin() + start + count);
  }
  return batches;
}

// The hot-feature cache of a run with --cache-ratio: its rows, what chose them, and the time
// it took to fill.
struct BenchCache {
  store::FeatureCache cache;
  loader::HotNodes hot;
  double build_s = 0;
};

// With --cache-ratio on a rank of a partitioned worker-mode job: pre-samples the first
// batches under another key (epoch 1; the measured batches use epoch 0) and keeps the most
// needed remote rows in `out`, which the session's fetcher then reads. With --temporal the
// pre-sampling takes every edge (loader::hottest_remote_nodes): the cache changes no result.
void warm_cache(runtime::RankContext& rank, runtime::Session& session, const Flags& flags,
                const std::vector<std::vector<int64_t>>& batches,
                const std::vector<int64_t>& fanouts, BenchCache& out) {
  const store::DistGraph& graph = session.graph();
  store::FeatureCache& cache = out.cache;
  loader::HotNodes& hot = out.hot;
  Stopwatch cache_watch;
  if (flags.cache_ratio > 0 && !graph.replicated() && !graph.client() && rank.size() > 1) {
    std::vector<std::vector<int64_t>> presample(
        batches.begin(), batches.begin() + std::min<int64_t>(flags.cache_presample, flags.batches));
    hot = loader::hottest_remote_nodes(
        session.sampler(), graph, presample, sample::Fanouts(fanouts), flags.seed, 1,
        loader::cache_budget(graph, flags.cache_ratio), flags.session.sampling.temporal);
    cache = graph.typed()
                ? store::FeatureCache::fetch_typed(session.fetcher(), hot.ids)
                : store::FeatureCache::fetch(session.fetcher(), hot.ids, graph.feature_row_bytes());
    session.fetcher().set_cache(&cache);
  }
  out.build_s = cache_watch.seconds();
}

// Where the hop times start among a rank's sums: after the fixed ones; inputs per node type
// follow them.
constexpr size_t kHopSums = 22;

// Rank 0's JSON object: `sums` over the sampling ranks (the fixed sums, then kHopSums on the
// hop times, then from `type_sums` the input nodes per node type), rates and per-rank means.
void print_figures(const Flags& flags, const store::DistGraph& graph,
                   const sample::Fanouts& resolved, int ranks, const std::vector<double>& sums,
                   size_t type_sums, double max_wall) {
  const std::vector<int64_t>& fanouts = resolved.hops;
  // Counts travel as doubles in the one allreduce; printed as the integers they are.
  auto count = [](double sum) { return static_cast<int64_t>(std::llround(sum)); };
  const double cores = static_cast<double>(ranks) * flags.session.sampling.threads;
  const double all_feature_bytes = sums[18];
  const double total_batches = static_cast<double>(flags.batches) * ranks;
  nlohmann::ordered_json hop_s = nlohmann::ordered_json::array();
  for (size_t h = 0; h < fanouts.size(); ++h) hop_s.push_back(sums[kHopSums + h] / ranks);
  const double remote_wanted = sums[9] + sums[12];  // feature rows not owned: wire + cache
  // Rates: per rank over its own busy time, summed over ranks.
  const double sample_rate = sums[0] / (sums[3] / ranks);
  const double fetch_rate = all_feature_bytes / (sums[4] / ranks);
  nlohmann::ordered_json out = {
      {"benchmark", "sample-bench"},
      {"parts", flags.session.parts_dir},
      {"ranks", ranks},  // that sample (servers not counted)
      {"servers", flags.session.servers},
      {"threads_per_rank", flags.session.sampling.threads},
      {"replicated", graph.replicated()},
      {"sample_on", flags.sample_on},
      {"sample_weight", name_of(train::sample_weight_names(), flags.session.sampling.weighting)},
      {"temporal", flags.rule.temporal},
      {"temporal_strategy",  // null without --temporal: no strategy applies
       flags.rule.temporal
           ? nlohmann::json(name_of(train::temporal_strategy_names(), flags.rule.strategy))
           : nlohmann::json()},
      {"temporal_strict", flags.session.sampling.strict},
      {"topology", name_of(runtime::topology_names(), flags.session.topology)},
      {"in_memory", flags.session.graph.in_memory},
      {"host_local", name_of(runtime::host_local_names(), flags.session.host_local)},
      {"host_local_peers_sum", count(sums[21])},  // parts mapped from same-host ranks
      {"fanouts", fanouts},
      {"batch_size", flags.batch_size},  // global, as --batch-size
      {"batches_per_rank", flags.batches},
      {"batches_per_s", total_batches / max_wall},
      {"seeds", count(sums[2])},
      {"sampled_edges", count(sums[0])},
      {"sampled_edges_per_s", sample_rate},
      {"sampled_edges_per_s_per_core", sample_rate / cores},
      {"input_nodes", count(sums[1])},
      {"feature_bytes", count(all_feature_bytes)},
      {"feature_gb_per_s", fetch_rate / 1e9},
      {"feature_gb_per_s_per_core", fetch_rate / 1e9 / cores},
      {"hop_s_per_rank", hop_s},
      {"sample_s_per_rank", sums[3] / ranks},
      {"fetch_s_per_rank", sums[4] / ranks},
      {"wall_s_max", max_wall},
      {"remote_requests", count(sums[6])},
      {"remote_bytes", count(sums[7])},
      {"remote_sampled_nodes", count(sums[8])},
      {"remote_feature_rows", count(sums[9])},
      {"host_sampled_nodes", count(sums[19])},  // of same-host ranks, sampled from memory
      {"host_feature_rows", count(sums[20])},   // of same-host ranks, copied from memory
      {"peak_rss_bytes_sum", count(sums[10])},
      {"remote_feature_bytes", count(sums[11])},
      {"cache_ratio", flags.cache_ratio},
      {"cache_hits", count(sums[12])},
      {"cache_hit_rate", remote_wanted > 0 ? sums[12] / remote_wanted : 0.0},
      {"cached_rows_sum", count(sums[13])},
      {"cache_bytes_sum", count(sums[14])},
      {"cache_build_s_per_rank", sums[15] / ranks},
      {"cache_expected_hit_rate", sums[17] > 0 ? sums[16] / sums[17] : 0.0},
  };
  if (graph.typed()) {
    // Per node type: the input nodes sampled (a featureless type fetches no rows).
    nlohmann::ordered_json types = nlohmann::ordered_json::object();
    const partition::TypedMeta& meta = graph.typed_meta();
    for (int t = 0; t < meta.num_types(); ++t)
      types[meta.node_types[static_cast<size_t>(t)].name] = {
          {"input_nodes", count(sums[type_sums + static_cast<size_t>(t)])},
          {"feat_dim", meta.node_types[static_cast<size_t>(t)].feat_dim}};
    out["node_types"] = std::move(types);
    out["relations"] = meta.num_relations();
    out["relation_fanouts"] = resolved.relations;
  }
  std::printf("%s\n", out.dump(2).c_str());
}

// The work of a rank that samples (a worker, or a client of server-client mode).
int bench_on(runtime::RankContext& rank, runtime::Session& session, const Flags& flags) {
  const store::DistGraph& graph = session.graph();
  const sample::Fanouts resolved = resolve_fanouts(flags, graph);
  const std::vector<int64_t>& fanouts = resolved.hops;
  const int me = session.rank(), ranks = session.size();
  train::check_node_seed_times(session);  // every rank's verdict: the metadata's
  std::vector<std::vector<int64_t>> batches = rank_batches(session, flags);
  BenchCache hot_cache;
  warm_cache(rank, session, flags, batches, fanouts, hot_cache);
  const store::FeatureCache& cache = hot_cache.cache;
  const loader::HotNodes& hot = hot_cache.hot;
  const double cache_s = hot_cache.build_s;
  const sample::DistSamplerStats ss0 = session.sampler().stats();
  const store::FetchStats fs0 = session.fetcher().stats();

  // The loader's work, one batch at a time (one thread, nothing prefetched, so sample and
  // fetch times add up to the wall time): blocks, then features (per node type on a typed
  // graph) and labels.
  TimedSampler timed(session.sampler(), fanouts.size());
  const std::unique_ptr<train::DeviceBlockSource> on_device = device_source(rank, session, flags);
  loader::BatchPipelineOptions pipeline_options;
  pipeline_options.threads = 1;
  pipeline_options.prefetch = 1;
  pipeline_options.fanouts = resolved;
  pipeline_options.seed = flags.seed;
  pipeline_options.feature_row_bytes = graph.feature_row_bytes();
  pipeline_options.typed = graph.typed();
  pipeline_options.fetch_labels = false;  // the benchmark measures blocks and feature rows
  pipeline_options.block_source = on_device.get();  // null: the host sampler
  // --temporal: each seed samples at its node_time, fetched by the pipeline (node training's
  // rule: train/node_task.cc).
  pipeline_options.temporal = flags.session.sampling.temporal != sample::Temporal::kNone;
  double sample_s = 0, fetch_s = 0, feature_bytes = 0;
  int64_t edges = 0, input_nodes = 0, seed_count = 0;
  std::vector<double> type_inputs(static_cast<size_t>(graph.num_node_types()), 0);
  session.collectives().barrier();
  Stopwatch total;
  {  // the pipeline's thread ends before the figures are gathered
    loader::BatchPipeline pipeline(pipeline_options, std::move(batches), timed, session.fetcher());
    while (std::optional<loader::Batch> batch = pipeline.next()) {
      sample_s += batch->sample_s;
      fetch_s += batch->fetch_s;
      edges += loader::num_sampled_edges(*batch);
      input_nodes += static_cast<int64_t>(batch->sampled.input_nodes.size());
      seed_count += static_cast<int64_t>(batch->sampled.seeds.size());
      feature_bytes += static_cast<double>(batch->features.size());
      for (size_t t = 0; t < batch->typed_inputs.size(); ++t) {
        type_inputs[t] += static_cast<double>(batch->typed_inputs[t].positions.size());
        feature_bytes += static_cast<double>(batch->typed_inputs[t].features.size());
      }
    }
  }
  const double wall_s = total.seconds();
  session.collectives().barrier();

  // Sums over ranks, then rates. Per core = per rank x sampler thread.
  // Traffic of the measured batches only (the cache's filling is reported apart).
  sample::DistSamplerStats ss = session.sampler().stats();
  store::FetchStats fs = session.fetcher().stats();
  ss.remote_requests -= ss0.remote_requests;
  ss.remote_bytes -= ss0.remote_bytes;
  ss.remote_nodes -= ss0.remote_nodes;
  fs.remote_requests -= fs0.remote_requests;
  fs.remote_bytes -= fs0.remote_bytes;
  fs.remote_rows -= fs0.remote_rows;
  fs.cache_hits -= fs0.cache_hits;
  fs.host_rows -= fs0.host_rows;
  ss.host_nodes -= ss0.host_nodes;
  session.fetcher().set_cache(nullptr);
  std::vector<double> sums{static_cast<double>(edges),
                           static_cast<double>(input_nodes),
                           static_cast<double>(seed_count),
                           sample_s,
                           fetch_s,
                           wall_s,
                           static_cast<double>(ss.remote_requests + fs.remote_requests),
                           static_cast<double>(ss.remote_bytes + fs.remote_bytes),
                           static_cast<double>(ss.remote_nodes),
                           static_cast<double>(fs.remote_rows),
                           static_cast<double>(peak_rss_bytes()),
                           static_cast<double>(fs.remote_bytes),
                           static_cast<double>(fs.cache_hits),
                           static_cast<double>(cache.rows()),
                           static_cast<double>(cache.bytes()),
                           cache_s,
                           static_cast<double>(hot.covered),
                           static_cast<double>(hot.remote_appearances),
                           feature_bytes,
                           static_cast<double>(ss.host_nodes),
                           static_cast<double>(fs.host_rows),
                           static_cast<double>(session.host_local_ranks().size())};
  for (double s : timed.seconds()) sums.push_back(s);
  const size_t type_sums = sums.size();
  sums.insert(sums.end(), type_inputs.begin(), type_inputs.end());
  session.collectives().allreduce_sum(sums);
  const double max_wall = session.collectives().allreduce_one(wall_s, ReduceOp::kMax);
  session.finish();
  if (me != 0) return 0;

  print_figures(flags, graph, resolved, ranks, sums, type_sums, max_wall);
  return 0;
}

int run_sample_bench(runtime::RankContext& rank, const Flags& given) {
  Flags flags = given;
  flags.session.sampling = sampling_rule(given.rule, given.session.sampling);
  flags.session.sampling.threads =
      resolve_sampler_threads(given.session.sampling.threads, rank.cores_per_rank());
  // Server-client mode: a server serves until every client is done, and samples nothing.
  return rank.run_session(
      flags.session, [&](runtime::Session& session) { return bench_on(rank, session, flags); });
}

}  // namespace

Action add_sample_bench_command(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  app.description(
      "Measure distributed neighbor sampling and feature fetching on a partition directory. "
      "Run alone or under mpirun (one rank per part, or any number of ranks on a 1-part "
      "directory, or --servers P with P server ranks and any number of clients). Each step, each "
      "rank samples its share of --batch-size seeds (a global count, as in train) from its own "
      "training ids with the given fanouts and fetches the features of their input nodes (per "
      "node type on a typed partition) and the labels of the seeds; the first rank that "
      "samples prints one JSON object with figures summed over ranks.");
  app.add_option("--parts", flags->session.parts_dir, "Partition directory")->required();
  app.add_option("--fanouts", flags->fanouts,
                 "Neighbors per hop, comma-separated (-1: all); on a typed partition N per "
                 "relation, or per relation as REL=N:...:N (e.g. 25,cites=10:20)")
      ->capture_default_str();
  app.add_option("--batch-size", flags->batch_size,
                 "Global batch: seeds per step summed over the sampling ranks, as in train "
                 "(each rank samples an even share of it)")
      ->capture_default_str();
  app.add_option("--batches", flags->batches, "Steps: batches each rank samples")
      ->capture_default_str();
  flags->session.sampling.threads = 0;  // automatic, resolved per rank in run_sample_bench
  app.add_option("--threads", flags->session.sampling.threads,
                 "Sampler threads per rank (0: automatic, one per 8 cores of the rank, 1 to 4)")
      ->capture_default_str();
  app.add_option("--seed", flags->seed, "Sampling seed")->capture_default_str();
  app.add_option("--timeout", flags->session.timeout_s, "Seconds to wait for a remote rank")
      ->capture_default_str();
  app.add_option("--servers", flags->session.servers,
                 "Server-client mode: the first N ranks (N = the parts) only serve, the other "
                 "ranks (clients) sample an even share of all training ids (0: worker mode)")
      ->capture_default_str();
  app.add_option("--cache-ratio", flags->cache_ratio,
                 "Hot-feature cache: keep up to R x (nodes this rank owns) remote feature rows, "
                 "chosen by pre-sampling (0: off); on a typed partition rows of featured node "
                 "types, each at its type's width")
      ->capture_default_str();
  app.add_option("--cache-presample", flags->cache_presample,
                 "Batches pre-sampled (under another key) to choose the cached rows")
      ->capture_default_str();
  app.add_flag("--in-memory", flags->session.graph.in_memory,
               "Copy the part's graph and features into huge-page memory at start-up instead "
               "of reading them through the file mapping (faster random access, more memory)");
  add_host_local_flag(app, &flags->session.host_local);
  app.add_option("--sample-on", flags->sample_on,
                 "host (the sampler threads) or device: train's sampler in torch ops on "
                 "--device over the whole topology (a 1-part directory, or --topology full; "
                 "hop_s_per_rank then stays 0)")
      ->capture_default_str();
  add_device_flag(app, &flags->device, "The device of --sample-on device: cpu, cuda or cuda:N");
  add_sampling_rule_flags(app, &flags->rule, &flags->session.sampling);
  add_topology_flag(app, &flags->session.topology);
  return [flags] {
    check_flags(*flags);
    return run_rank([&](runtime::RankContext& rank) { return run_sample_bench(rank, *flags); });
  };
}

}  // namespace partita::cli
