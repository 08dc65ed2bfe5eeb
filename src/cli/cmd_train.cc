// partita train: data-parallel GNN training on a partition directory (DESIGN 7). Rank 0
// prints one line per epoch (and a progress bar on a terminal) and, last,
// `test_acc=<value>`; with --checksum every rank then prints `rank=<r> param_checksum=<value>`
// to stderr so that tests can compare ranks' weights.
#include <fmt/format.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "device_flag.h"
#include "enum_option.h"
#include "flags.h"
#include "host_local_flag.h"
#include "interrupt_notice.h"
#include "launch_layout.h"
#include "launcher_env.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/name_table.h"
#include "partita/nn/kernel_path.h"
#include "partita/partition/format.h"
#include "partita/runtime/job_collectives.h"
#include "partita/runtime/rank_job.h"
#include "partita/sample/fanout_spec.h"
#include "partita/sample/metapath_spec.h"
#include "partita/train/checkpoint.h"
#include "partita/train/metapaths.h"
#include "partita/train/session_embeddings.h"
#include "partita/train/trainer.h"
#include "profile_tables.h"
#include "progress.h"
#include "rank_main.h"
#include "resume_settings.h"
#include "sampling_rule_flags.h"
#include "topology_flag.h"
#include "train_settings.h"

namespace partita::cli {
namespace {

// The flags bind straight onto the library's option structs, whose defaults are the
// command's (train::TrainOptions, runtime::SessionOptions), declared there once; enum flags
// bind through their name tables (add_enum_option). Only the fanout spec (resolved against
// the graph's relations), the link metric (hits@K) and the machine-dependent thread counts
// go through a text or 0 first. A model's own defaults (train::model_defaults) and, with
// --resume, the checkpoint's values are set on the flags before anything runs (settle_flags).
struct Flags {
  train::TrainOptions train;
  runtime::SessionOptions session;
  std::string fanouts = fanouts_text(train::TrainOptions{}.loader.fanouts);
  std::string metric = train::link_metric_name(train::LinkTaskOptions{});
  std::string device = train::device_text(train::DeviceSpec{});  // --device, rank_device
  int torch_threads = 0;                 // 0: this rank's cores, shared with the sampler threads
  std::optional<ProgressMode> progress;  // nullopt: auto
  double progress_every_s = 10;
  std::string log_every = "auto";  // --log-every: auto or N
  std::string gpu_cache_ratio;     // --gpu-cache-ratio: empty (the device's default), auto or R
  bool checksum = false;
  std::string metrics_out;
  bool layers_given = false;  // else --layers is the number of fanouts
  bool force = false;         // --metrics-out may replace an existing file
  // --temporal (and --temporal-strategy): session.sampling.temporal once settled (sampling()).
  SamplingRuleFlags rule;
  MetricsFile::RunInfo run;  // the settings, for --metrics-out's run record
};

// --progress: auto (nullopt) or a mode.
const NameTable<std::optional<ProgressMode>>& progress_names() {
  static const NameTable<std::optional<ProgressMode>> names{{"auto", std::nullopt},
                                                            {"bar", ProgressMode::kBar},
                                                            {"lines", ProgressMode::kLines},
                                                            {"off", ProgressMode::kOff}};
  return names;
}

// --metric: auc, ap, mrr or hits@K.
void parse_link_metric(const std::string& text, train::LinkTaskOptions* link) {
  const std::string hits = "hits@";
  if (text.rfind(hits, 0) == 0) {
    const std::string k = text.substr(hits.size());
    const std::string why = integer_flag_error(k, false);
    PARTITA_CHECK(why.empty() && !k.empty() && k.size() <= 9 && k != "0", UsageError,
                  "--metric: '{}': K of hits@K must be a positive integer{}", text,
                  why.empty() ? "" : " (" + why + ")");
    link->metric = train::LinkMetricKind::kHits;
    link->hits_k = std::stoll(k);
    return;
  }
  const std::optional<train::LinkMetricKind> kind =
      find_named(train::link_metric_kind_names(), text);
  PARTITA_CHECK(kind && *kind != train::LinkMetricKind::kHits, UsageError,
                "--metric: '{}' is not one of auc, ap, mrr, hits@K", text);
  link->metric = *kind;
}

// The sampling rule of the run: the session's sampler options with --temporal's strategy.
sample::LocalSamplerOptions sampling(const Flags& f) {
  sample::LocalSamplerOptions s = sampling_rule(f.rule, f.session.sampling);
  s.edge_ids = f.train.loader.edge_features;  // edge features are fetched by edge id
  return s;
}

// The options of the run, checked (UsageError on a bad value).
train::TrainOptions make_options(const Flags& f, int cores_per_rank) {
  train::TrainOptions o = f.train;
  parse_link_metric(f.metric, &o.link);
  // The hops' counts now (for --layers); relation names are resolved against the graph
  // (train_on), each hop that names relations held as -1 until then.
  o.loader.fanouts = sample::unresolved_fanouts(sample::parse_fanout_spec(f.fanouts));
  if (!f.layers_given) o.model.layers = static_cast<int64_t>(o.loader.fanouts.num_hops());
  PARTITA_CHECK(f.torch_threads >= 0, UsageError,
                "--torch-threads: must be in [0, 1024] (0: the cores per rank), got {}",
                f.torch_threads);
  o.loader.threads = resolve_sampler_threads(f.train.loader.threads, cores_per_rank);
  o.torch_threads =
      f.torch_threads > 0 ? f.torch_threads : rule_torch_threads(cores_per_rank, o.loader.threads);
  if (f.log_every != "auto") {
    const std::string why = integer_flag_error(f.log_every, false);
    PARTITA_CHECK(why.empty() && !f.log_every.empty() && f.log_every.size() <= 12, UsageError,
                  "--log-every: '{}' is not auto or a number of steps (0: once per epoch){}",
                  f.log_every, why.empty() ? "" : " (" + why + ")");
    o.log_every = std::stoll(f.log_every);
  }
  if (f.gpu_cache_ratio == "auto") {
    o.cache.gpu_ratio = train::kGpuCacheAuto;
  } else if (!f.gpu_cache_ratio.empty()) {
    const char* text = f.gpu_cache_ratio.c_str();
    char* end = nullptr;
    o.cache.gpu_ratio = std::strtod(text, &end);
    PARTITA_CHECK(end == text + f.gpu_cache_ratio.size(), UsageError,
                  "--gpu-cache-ratio: '{}' is not auto or a number in [0, 1]", f.gpu_cache_ratio);
  }
  train::check_options(o);
  check_sampling_rule_flags(f.rule, f.session.sampling);
  train::check_sampling_rule(o, sampling(f));
  check_timeout(f.session.timeout_s);
  if (!f.metrics_out.empty()) check_metrics_out(f.metrics_out, o.checkpoint.resume, f.force);
  PARTITA_CHECK(f.session.servers >= 0, UsageError,
                "--servers: must be >= 0 (0: worker mode), got {}", f.session.servers);
  PARTITA_CHECK(f.progress_every_s >= 0 && f.progress_every_s <= 1e6, UsageError,
                "--progress-every: must be in [0, 1e6] seconds, got {}", f.progress_every_s);
  return o;
}

// --gpu-cache-ratio's default: auto where the model's device is a GPU and the device cache
// serves the run (homogeneous models in worker mode), else 0 (none).
double default_gpu_cache_ratio(const train::TrainOptions& o, int servers) {
  const bool served = o.model.kind != train::ModelKind::kRgcn &&
                      o.model.kind != train::ModelKind::kHan && servers == 0;
  return !o.device.is_cpu() && served ? train::kGpuCacheAuto : 0.0;
}

// Training allocates the same large tensors every step. glibc would serve each one over
// 32 MiB with a fresh mmap and return it on free, so every step paid page faults and page
// zeroing again (measured: 27% of a products-like step). Serve them from the heap and keep
// freed memory for reuse instead; peak RSS is unchanged. One arena: the sampler threads'
// own arenas (64 MiB heaps) cannot hold a batch's feature rows and kept returning and
// faulting in pages (synth200k, 2 ranks, bf16: 1.78 M -> 0.73 M page faults per rank,
// epoch 20.1 s -> 16.3 s, fetch 6.7 s -> 2.4 s).
void keep_freed_memory() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_ARENA_MAX, 1);
}

// oneDNN (bf16 matrix products) caches a compiled primitive per matrix shape, and every
// mini-batch has new shapes: the cache never hits and only holds memory. Measured
// (synth200k, 1 rank, bf16, 3 runs each): peak RSS 3.7-4.5 GB -> 2.3-2.5 GB, epoch
// 14.9-17.0 s -> 12.8-13.9 s. A capacity the user sets in the environment wins.
void disable_onednn_primitive_cache() { setenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "0", 0); }

// --progress: auto is a bar when the user sees a terminal (rank 0's stderr is one, or
// `partita launch` ran on one and set PARTITA_PROGRESS=bar, since under mpirun a rank's
// stderr is a pipe), else a line every --progress-every seconds; -q turns both off.
ProgressMode progress_mode(const std::optional<ProgressMode>& flag) {
  if (log_level() < LogLevel::kInfo) return ProgressMode::kOff;
  if (flag) return *flag;
  const char* env = std::getenv("PARTITA_PROGRESS");
  const bool terminal = ::isatty(STDERR_FILENO) || (env != nullptr && std::string(env) == "bar");
  return terminal ? ProgressMode::kBar : ProgressMode::kLines;
}

// A partition made with --edge-split lacks its held-out edges: node classification on it
// would train on another graph than the dataset's, without a word.
void refuse_edge_split_for_node_task(const store::DistGraph& graph, const train::TrainOptions& o) {
  if (o.task != train::Task::kNode || !graph.meta().summary.edge_split) return;
  const partition::EdgeSplitStats& split = *graph.meta().summary.edge_split;
  throw UsageError(fmt::format(
      "--parts: {} holds a link-prediction split ({} held-out edges missing from its graph); "
      "node classification would train without them: pass --task link, or partition the "
      "dataset again without --edge-split",
      graph.dir(), split.valid + split.test));
}

// Model han: the metapaths the run resolved (its --metapaths, or the schema's default), in
// what checkpoints and --metrics-out record, and in a line of the log.
void record_metapaths(const store::DistGraph& graph, bool print, train::TrainOptions* options) {
  if (options->model.kind != train::ModelKind::kHan || !graph.typed()) return;
  const std::vector<sample::Metapath> metapaths =
      train::resolve_metapaths(*options, graph.typed_meta());
  std::string names, described;
  for (const sample::Metapath& m : metapaths) {
    names += (names.empty() ? "" : ",") + m.name;
    // "paper-author-paper (relations)"; a path named otherwise: "name = types (relations)".
    const std::string description = sample::describe_metapath(m, graph.typed_meta());
    described +=
        (described.empty() ? "" : ", ") +
        (description.rfind(m.name + " (", 0) == 0 ? description : m.name + " = " + description);
  }
  for (auto& [name, value] : options->checkpoint.settings)
    if (name == "metapaths") value = names;
  if (print) log_info("han: {} metapaths: {}", metapaths.size(), described);
}

// With --gpu-cache-ratio, the end of the epoch line: rank 0's share of its input feature
// rows found in the device cache (training and validation batches) and the reply bytes its
// fetches received.
void print_gpu_cache_figures(const train::EpochRecord& r) {
  const double rate = r.gpu_cache_lookups > 0 ? static_cast<double>(r.gpu_cache_hits) /
                                                    static_cast<double>(r.gpu_cache_lookups)
                                              : 0.0;
  std::printf(" gpu_cache_hit_rate=%.4f remote_bytes=%lld", rate,
              static_cast<long long>(r.remote_bytes));
}

// The work of a rank that trains (a worker, or a trainer of server-client mode). `notice`:
// what Ctrl-C says, on the first rank that trains (null on the others).
int train_on(runtime::Session& session, const Flags& flags, train::TrainOptions options,
             InterruptNotice* notice) {
  refuse_edge_split_for_node_task(session.graph(), options);
  // --fanouts' relation (model han: metapath) names, now that the graph is known.
  options.loader.fanouts =
      train::resolve_model_fanouts(flags.fanouts, session.graph(), options.model);
  const bool print = session.rank() == 0;  // the first rank that trains
  record_metapaths(session.graph(), print, &options);
  // --log-every auto: every step under a progress bar (a terminal), else once per epoch.
  if (flags.log_every == "auto")
    options.log_every = print && progress_mode(flags.progress) == ProgressMode::kBar ? 1 : 0;
  train::Trainer trainer(session, options);
  if (print && options.cache.ratio > 0) {
    const train::CacheReport& c = trainer.cache_report();
    log_info(
        "cache: rank 0 keeps {} remote rows ({:.1f} MiB), expected hit rate {:.3f}, chosen "
        "from {} pre-sampled batches in {:.2f} s",
        c.rows, static_cast<double>(c.bytes) / (1 << 20), c.expected_hit_rate, c.presample_batches,
        c.presample_s);
  }
  if (print && options.cache.ratio > 0 && options.loader.edge_features) {
    const train::CacheReport& c = trainer.cache_report();
    log_info("edge cache: rank 0 keeps {} remote edge rows ({:.1f} MiB), expected hit rate {:.3f}",
             c.edge_rows, static_cast<double>(c.edge_bytes) / (1 << 20), c.edge_expected_hit_rate);
  }
  if (print && options.cache.gpu_ratio != 0) {
    const train::DeviceCacheReport& c = trainer.device_cache_report();
    log_info(
        "gpu cache: rank 0 keeps {} feature rows on {} ({:.1f} MiB, {} of them remote), "
        "expected hit rate {:.3f} ({:.3f} of remote rows), chosen from {} pre-sampled batches "
        "in {:.2f} s{}",
        c.rows, c.device, static_cast<double>(c.bytes) / (1 << 20), c.remote_rows,
        c.expected_hit_rate, c.expected_remote_hit_rate, c.presample_batches, c.presample_s,
        options.cache.gpu_ratio == train::kGpuCacheAuto
            ? fmt::format("; auto: room for {} rows in {:.0f}% of {:.1f} MiB free", c.budget_rows,
                          100 * train::kGpuCacheAutoShare,
                          static_cast<double>(c.free_bytes) / (1 << 20))
            : std::string());
  }
  // What val_ and the last line report: accuracy, or the link task's metrics.
  const bool link = options.task == train::Task::kLink;
  const std::string validation_name = link ? train::link_metric_name(options.link) : "acc";
  std::unique_ptr<MetricsFile> metrics;
  if (print && !flags.metrics_out.empty()) {
    metrics = std::make_unique<MetricsFile>(flags.metrics_out, options.checkpoint.resume,
                                            "val_" + validation_name);
    MetricsFile::RunInfo run = flags.run;
    run.resume = options.checkpoint.resume;
    run.ranks = session.size();
    run.servers = flags.session.servers;
    run.settings = options.checkpoint.settings;  // the values the flags resolved to
    metrics->write_run(run);
  }
  const ProgressMode mode = print ? progress_mode(flags.progress) : ProgressMode::kOff;
  ProgressBar bar(mode, options.epochs, flags.progress_every_s);
  const auto on_epoch = [&](const train::EpochRecord& r) {
    if (!print) return;
    bar.clear();
    std::printf(
        "epoch=%lld steps=%lld loss=%.4f train_acc=%.4f val_%s=%s epoch_s=%.3f "
        "sample_s=%.3f fetch_s=%.3f compute_s=%.3f allreduce_s=%.3f wait_s=%.3f eval_s=%.3f",
        static_cast<long long>(r.epoch), static_cast<long long>(r.steps), r.loss, r.train_acc,
        validation_name.c_str(), r.validated ? fmt::format("{:.4f}", r.val_acc).c_str() : "-",
        r.epoch_s, r.sample_s, r.fetch_s, r.compute_s, r.allreduce_s, r.wait_s, r.eval_s);
    if (options.cache.gpu_ratio != 0) print_gpu_cache_figures(r);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    if (metrics) metrics->write_epoch(r);
    // The trainer wrote the epoch's checkpoint before calling back.
    if (notice != nullptr) notice->epoch_done(r.epoch, r.epoch >= options.epochs);
  };
  // Ctrl-C's notice learns of an epoch as it begins (on_epoch_start: no read of the device;
  // a progress record comes only after --log-every steps, with 0 at the epoch's last).
  const auto on_epoch_start = [&](int64_t epoch) {
    if (notice != nullptr && notice->state().epoch != epoch) notice->training(epoch);
  };
  // Progress records read the loss from the device: only rank 0's bar or lines ask for them.
  std::function<void(const train::StepRecord&)> on_step;
  if (mode != ProgressMode::kOff) on_step = [&](const train::StepRecord& s) { bar.update(s); };
  const train::TrainResult result = trainer.train(on_epoch, on_step, on_epoch_start);
  bar.clear();
  if (notice != nullptr)
    notice->finished(link && result.test_link
                         ? fmt::format("test_auc={:.4f}", result.test_link->auc)
                         : fmt::format("test_acc={:.4f}", result.test_acc));
  if (print && result.resumed_epochs >= options.epochs)
    log_warning(
        "--epochs {}: the checkpoint has {} epochs done, so no epoch is trained; pass "
        "--epochs above {} to train more (test metrics are of the restored model)",
        options.epochs, result.resumed_epochs, result.resumed_epochs);
  if (metrics) metrics->write_final(result, session.size(), flags.session.servers);
  if (print && result.profile) {
    // stderr: stdout keeps its lines (per epoch, then test_acc=) for scripts.
    const std::string title = fmt::format(
        "rank 0 of {} (every rank profiles its own steps; rank 0's shown), {} torch threads, {}",
        session.size(), options.torch_threads,
        name_of(nn::precision_names(), options.model.precision));
    std::fputs(profile_tables(*result.profile, title).c_str(), stderr);
    std::fflush(stderr);
  }
  if (flags.checksum) {
    std::fprintf(stderr, "rank=%d param_checksum=%.9e\n", session.world_rank(),
                 trainer.parameter_checksum());
  }
  session.finish();
  if (print && link) {
    const train::LinkMetrics& m = *result.test_link;
    std::printf("test_ap=%.4f test_mrr=%.4f test_hits@%lld=%.4f\ntest_auc=%.4f\n", m.ap, m.mrr,
                static_cast<long long>(m.hits_k), m.hits, m.auc);
    std::fflush(stdout);
  } else if (print) {
    std::printf("test_acc=%.4f\n", result.test_acc);
    std::fflush(stdout);
  }
  return 0;
}

int run_train(runtime::RankContext& rank, const Flags& flags, InterruptNotice* notice) {
  keep_freed_memory();
  disable_onednn_primitive_cache();
  train::TrainOptions options = make_options(flags, rank.cores_per_rank());
  options.device = rank_device(flags.device, rank);
  if (flags.gpu_cache_ratio.empty())
    options.cache.gpu_ratio = default_gpu_cache_ratio(options, flags.session.servers);
  options.checkpoint.settings = flags.run.settings;        // what every checkpoint records
  for (auto& [name, value] : options.checkpoint.settings)  // the values the flags resolved to
    if (name == "layers") value = std::to_string(options.model.layers);
  log_debug("rank {} of {}: {} cores, {} torch threads, {} sampler threads, device {}", rank.rank(),
            rank.size(), rank.cores_per_rank(), options.torch_threads, options.loader.threads,
            train::device_text(options.device));
  runtime::SessionOptions session_options = flags.session;
  session_options.sampling = sampling(flags);
  train::set_session_embeddings(options, &session_options);
  // Server-client mode: a server serves until every trainer is done, and trains nothing.
  return rank.run_session(session_options, [&](runtime::Session& session) {
    return train_on(session, flags, options, notice);
  });
}

// Every flag of the command with its value as text (given, else its default), and which
// were given: the run record of --metrics-out.
MetricsFile::RunInfo run_settings(const CLI::App& app) {
  MetricsFile::RunInfo run;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_lnames().empty() || option->get_lnames()[0] == "help") continue;
    const std::string& name = option->get_lnames()[0];
    std::string value;
    if (option->get_type_size() == 0 || option->get_expected_max() == 0) {  // a flag
      value = option->count() > 0 ? "true" : "false";
    } else if (option->count() > 0) {
      // The values kept: the last of a flag given twice (results() holds every one).
      for (const std::string& r : option->reduced_results())
        value += (value.empty() ? "" : ",") + r;
    } else {
      value = option->get_default_str();
    }
    if (option->count() > 0) run.given.push_back(name);
    run.settings.emplace_back(name, value);
  }
  return run;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool sets(const Settings& settings, const std::string& name) {
  for (const auto& [n, v] : settings)
    if (n == name) return true;
  return false;
}

// This run's value of every flag, given or default, `layers` resolved: when not given, the
// number of --fanouts (what make_options will take).
Settings current_settings(const CLI::App& app, const Flags& flags,
                          const std::vector<std::string>& given) {
  Settings current = run_settings(app).settings;
  if (!contains(given, "layers"))
    for (auto& [name, value] : current)
      if (name == "layers")
        value = std::to_string(sample::parse_fanout_spec(flags.fanouts).num_hops());
  return current;
}

// --metapaths as recorded and as given mean the same metapaths when they resolve to the same
// relations on this partition's schema (the default's names, or relation names for type
// names); nullopt when that cannot be told here (the session reports a partition it cannot
// read).
SameSetting same_metapaths(const std::string& parts_dir) {
  return [parts_dir](const std::string& name, const std::string& stored,
                     const std::string& given) -> std::optional<bool> {
    if (name != "metapaths") return std::nullopt;
    try {
      const partition::PartitionMeta meta = partition::read_meta(parts_dir);
      if (!meta.typed) return std::nullopt;
      return train::same_metapaths(stored, given, *meta.typed);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
}

// The flags of the run, settled before any work (train_settings.h), on every rank alike:
// with --resume, the latest checkpoint's values of the flags not given (collective over the
// job: the first rank that trains reads it); then the model's own defaults for the flags
// still unset. `given`: the flags given on the command line.
void settle_flags(CLI::App& app, const std::vector<std::string>& given_flags,
                  runtime::RankContext& rank, Flags* flags) {
  std::vector<std::string> given = given_flags;
  // --fanouts given decides --layers (their count): neither is the checkpoint's nor the model's.
  if (contains(given, "fanouts") && !contains(given, "layers")) given.push_back("layers");
  Settings reapplied;
  const train::CheckpointOptions& checkpoint = flags->train.checkpoint;
  if (checkpoint.resume && !checkpoint.dir.empty()) {
    const int servers = flags->session.servers;
    const int root = servers > 0 && servers < rank.size() ? servers : 0;
    std::unique_ptr<Collectives> job = runtime::mpi_job_collectives(flags->session.timeout_s);
    const RecordedSettings recorded = share_recorded_settings(*job, checkpoint.dir, root);
    if (recorded.found) {
      const ResumePlan plan =
          plan_resume(recorded.settings, current_settings(app, *flags, given_flags), given,
                      recorded.source, same_metapaths(flags->session.parts_dir));
      set_flag_values(app, plan.reapplied, recorded.source);
      reapplied = plan.reapplied;
      if (rank.rank() == root) log_settings_lines(plan.notices, plan.warnings);
    }
  }
  // --dropout given decides --attention-dropout too (its -1: the same), as for every model.
  if (contains(given, "dropout")) given.push_back("attention-dropout");
  Settings defaults;
  for (const auto& [name, value] : model_default_settings(flags->train.model.kind))
    if (!contains(given, name) && !sets(reapplied, name)) defaults.emplace_back(name, value);
  set_flag_values(app, defaults, "--model's defaults");
  flags->layers_given =
      contains(given_flags, "layers") || sets(reapplied, "layers") || sets(defaults, "layers");
  flags->run = run_settings(app);
  flags->run.given = given_flags;
}

// "; han: --layers 1 ...": the --help words for the flags a model's defaults set.
std::string model_defaults_help() {
  const Settings han = model_default_settings(train::ModelKind::kHan);
  return han.empty() ? std::string()
                     : " han's own defaults, for the flags not given (HAN's recipe; "
                       "docs/training.md): " +
                           settings_text(han);
}

// " (han: 8)": a model's default of `flag`, for its help; empty when no model has one.
std::string model_default_help(const std::string& flag) {
  for (const auto& [name, value] : model_default_settings(train::ModelKind::kHan))
    if (name == flag) return " (han: " + value + ")";
  return "";
}

// The partition and the task: node classification, or link prediction and its negatives.
void add_task_flags(CLI::App& app, Flags* flags) {
  app.add_option("--parts", flags->session.parts_dir, "Partition directory")->required();
  add_enum_option(app, "--task", &flags->train.task, train::task_names(),
                  "node (classify nodes) or link (predict edges: needs a partition made with "
                  "--edge-split; the seeds are training edges, the last line test_auc=)");
  app.add_option("--negatives", flags->train.link.negatives,
                 "link: corrupted pairs (u, w) per training edge (u, v)")
      ->capture_default_str();
  add_enum_option(app, "--negatives-by", &flags->train.link.negative_kind,
                  loader::negative_kind_names(),
                  "link: how w is drawn: uniform over all nodes, or degree (proportional to "
                  "in-degree)");
  add_enum_option(app, "--exclude", &flags->train.link.exclude, sample::exclude_names(),
                  "link: edges removed from a batch's sampled blocks: reverse (its training "
                  "edges and their reverses), self (the training edges), none");
  add_enum_option(app, "--decoder", &flags->train.link.decoder, nn::link_decoder_names(),
                  "link: pair score from the two node embeddings: dot (product) or mlp (an "
                  "MLP on their element-wise product)");
  app.add_option("--metric", flags->metric,
                 "link: the validation metric printed per epoch: auc, ap, mrr or hits@K "
                 "(all of them are in the final record)")
      ->capture_default_str();
}

// The model: its kind, shape and learned embeddings; --model's own defaults are named in each help.
void add_model_flags(CLI::App& app, Flags* flags) {
  add_enum_option(app, "--model", &flags->train.model.kind, train::model_kind_names(),
                  "sage, gcn, gat, gatv2 (GATv2: attention with the nonlinearity inside) or gine "
                  "(GIN with edge features: needs --edge-features); rgcn or han for typed "
                  "(heterogeneous) partitions." +
                      model_defaults_help());
  app.add_option("--metapaths", flags->train.model.metapaths,
                 "han: the metapaths, comma-separated, each its node types joined by '-' "
                 "(paper-author-paper) or its relations, followed along in-edges from the "
                 "labelled type (writes-rev_writes); each starts and ends on the labelled "
                 "type. Default: target-X-target through every other node type X joined to "
                 "the labelled type both ways (heco-acm: paper-author-paper,"
                 "paper-subject-paper). --fanouts then counts metapath neighbours per node and "
                 "metapath, and may name metapaths where rgcn names relations "
                 "(10,paper-subject-paper=5:10)");
  app.add_option("--num-bases", flags->train.model.num_bases,
                 "rgcn: relation weights as combinations of this many shared bases (0: one "
                 "weight per relation)")
      ->capture_default_str();
  app.add_option("--embed-lr", flags->train.embeddings.lr,
                 "rgcn, han: learning rate of the learned embeddings of node types without "
                 "features (sparse Adam, or SGD with --optimizer sgd; 0: 2 x --lr)")
      ->capture_default_str();
  app.add_option("--layers", flags->train.model.layers,
                 "Layers; must equal the number of --fanouts, which is the default" +
                     model_default_help("layers"));
  app.add_option(
         "--hidden", flags->train.model.hidden,
         "Hidden width (gat, gatv2, han: per head; a hidden layer outputs hidden x heads; han: "
         "also the width of learned embeddings)" +
             model_default_help("hidden"))
      ->capture_default_str();
  app.add_option(
         "--heads", flags->train.model.heads,
         "Attention heads of gat's and gatv2's hidden layers (their output layer has one) and "
         "of every "
         "han layer" +
             model_default_help("heads"))
      ->capture_default_str();
  app.add_option("--embed-init", flags->train.embeddings.init,
                 "rgcn, han: learned embeddings start uniform in [-S, S)" +
                     model_default_help("embed-init"))
      ->capture_default_str();
  app.add_option("--dropout", flags->train.model.dropout,
                 "Dropout on the input of every layer" + model_default_help("dropout"))
      ->capture_default_str();
  app.add_option("--attention-dropout", flags->train.model.attention_dropout,
                 "gat, han: dropout on the attention coefficients (-1: same as --dropout)" +
                     model_default_help("attention-dropout"))
      ->capture_default_str();
  add_enum_option(app, "--precision", &flags->train.model.precision, nn::precision_names(),
                  "fp32, or bf16: bfloat16 activations and matrix products (AVX512-BF16/AMX) "
                  "with fp32 weights, optimizer state and loss");
}

// What a step trains on and how the weights move: fanouts, batches, epochs, optimizer, seed.
void add_schedule_flags(CLI::App& app, Flags* flags) {
  app.add_option("--fanouts", flags->fanouts,
                 "Neighbors per hop, comma-separated (-1: all). Typed graphs: N per incoming "
                 "relation, or per relation as REL=N entries joined by ':' with a default for "
                 "the rest, e.g. 25,cites=10:writes=5:20; REL is a relation as `partita info` "
                 "lists it (paper___cites___paper) or, when no other relation has it, its "
                 "short name (cites)" +
                     model_default_help("fanouts"))
      ->capture_default_str();
  app.add_option("--batch-size", flags->train.loader.batch_size,
                 "Global mini-batch: seeds per step summed over all ranks (each rank takes "
                 "its share, so any number of ranks runs the same number of steps)")
      ->capture_default_str();
  app.add_option("--epochs", flags->train.epochs, "Epochs")->capture_default_str();
  app.add_option("--max-steps", flags->train.loader.max_steps,
                 "Stop every epoch after this many steps (0: all), for quick runs and "
                 "benchmarks")
      ->capture_default_str();
  app.add_option("--lr", flags->train.optimizer.lr, "Learning rate" + model_default_help("lr"))
      ->capture_default_str();
  app.add_option("--weight-decay", flags->train.optimizer.weight_decay, "Weight decay")
      ->capture_default_str();
  app.add_flag("--normalize-features", flags->train.normalize_features,
               "Row-normalize input features (each row divided by its sum)");
  add_enum_option(app, "--optimizer", &flags->train.optimizer.kind, train::optimizer_kind_names(),
                  "adam or sgd");
  app.add_option("--seed", flags->train.seed, "Seed of weights, shuffling and sampling")
      ->capture_default_str();
}

// Which in-edges a node may sample: by time (--temporal) and by weight (--sample-weight), as
// sample-bench (sampling_rule_flags.h); and whether the model reads the sampled edges' features.
void add_sampling_rule_flags(CLI::App& app, Flags* flags) {
  cli::add_sampling_rule_flags(app, &flags->rule, &flags->session.sampling);
  app.add_flag("--edge-features", flags->train.loader.edge_features,
               "Feed the model each sampled edge's features (the partition's edge_feat, "
               "fetched by edge id from the edge's owner like node features) with a model "
               "whose layers read them (gat, with an edge_dim of the edge_feat width). "
               "Homogeneous partitions");
}

// Where the work runs: device, kernels, threads, server ranks, sampling and topology placement.
void add_placement_flags(CLI::App& app, Flags* flags) {
  add_device_flag(app, &flags->device,
                  "Where the model, its optimizer state, the batches and the loss live: cpu; "
                  "cuda:N (GPU N for every rank); or cuda, one GPU per rank: the ranks of a "
                  "host are dealt out over the GPUs it sees in blocks by local rank "
                  "(docs/launch.md, GPUs). Sampling runs there too where the rank holds the "
                  "topology (--sample-on); features are fetched on the CPU and go to the GPU "
                  "through pinned memory, gradients cross MPI through host memory. "
                  "Needs a torch built with CUDA; the losses of cpu are those of no flag, and "
                  "checkpoints resume on any device");
  add_enum_option(app, "--kernels", &flags->train.kernels, nn::kernel_path_names(),
                  "auto: fused kernels on the CPU, device-generic torch ops on a GPU; generic: "
                  "the device-generic ops on the CPU too (what a GPU runs: to test it, and for "
                  "--profile's ops_per_step and host_syncs_per_step on a CPU). Results equal "
                  "within rounding; dropout masks are drawn by torch's generator instead");
  flags->train.loader.threads = 0;  // automatic, resolved per rank in make_options
  app.add_option("--threads", flags->train.loader.threads,
                 "Sampler threads per rank (0: automatic, one per 8 cores of the rank, 1 to 4)")
      ->capture_default_str();
  app.add_option("--torch-threads", flags->torch_threads,
                 "Threads of the model's kernels and matrix products per rank (0: from the "
                 "cores this rank may use: its CPU affinity under a binding launcher, else the "
                 "host's cores divided by the ranks on it; on more than 4 cores, less the "
                 "sampler --threads)")
      ->capture_default_str();
  app.add_option("--prefetch", flags->train.loader.prefetch, "Batches prepared ahead")
      ->capture_default_str();
  app.add_option("--timeout", flags->session.timeout_s, "Seconds to wait for a remote rank")
      ->capture_default_str();
  app.add_option("--servers", flags->session.servers,
                 "Server-client mode: the first N ranks (N = the parts) only serve sampling "
                 "and features, the other ranks train (0: worker mode, every rank serves its "
                 "part and trains; docs/training.md says when to use which)")
      ->capture_default_str();
  add_host_local_flag(app, &flags->session.host_local);
  add_enum_option(app, "--sample-on", &flags->train.loader.sample_on, train::sample_on_names(),
                  "Where neighbours are sampled and blocks built: device (on --device, from the "
                  "whole topology held there: a 1-part directory, or --topology full), host "
                  "(the sampler threads), or auto: device with --device cuda where the rank "
                  "holds the topology (node task, not han), else host. Both give the same "
                  "blocks (docs/training.md, Sampling on the device)");
  add_topology_flag(app, &flags->session.topology);
}

// Feature caches: host-side for remote rows, device-side for every row a batch needs.
void add_cache_flags(CLI::App& app, Flags* flags) {
  app.add_option("--cache-ratio", flags->train.cache.ratio,
                 "Hot-feature cache: keep up to R x (nodes this rank owns) remote feature rows, "
                 "the ones pre-sampled batches need most (0: off; results do not change)")
      ->capture_default_str();
  app.add_option("--cache-presample", flags->train.cache.presample_batches,
                 "Steps pre-sampled to choose the cached rows (--cache-ratio and "
                 "--gpu-cache-ratio)")
      ->capture_default_str();
  app.add_option("--gpu-cache-ratio", flags->gpu_cache_ratio,
                 "Device feature cache: keep up to R x (nodes this rank owns) feature rows, "
                 "local or remote, the ones pre-sampled batches need most, in the model "
                 "device's memory (on the CPU in host memory), so that a batch neither "
                 "gathers, fetches nor copies them (0: off; results do not change; untyped "
                 "partitions, worker mode). auto: as many rows as fit in half the device's "
                 "free memory, every row the rank owns when they all fit (docs/training.md)")
      ->default_str("auto with --device cuda (sage, gcn, gat in worker mode), else 0");
}

// Evaluation, checkpoints and the metrics file.
void add_evaluation_flags(CLI::App& app, Flags* flags) {
  add_enum_option(app, "--eval", &flags->train.eval.mode, train::eval_mode_names(),
                  "How validation and test accuracy are measured: sampled (blocks with the "
                  "training fanouts) or full (layer-wise full-neighbourhood inference, as "
                  "`partita infer`, DGL and PyG report it)");
  app.add_option("--eval-every", flags->train.eval.every,
                 "Validate after every K-th epoch and after the last (0: never)")
      ->capture_default_str();
  app.add_option("--checkpoint-dir", flags->train.checkpoint.dir,
                 "Write model, optimizer and epoch after every epoch into this directory "
                 "(rank 0's host only; the two latest are kept; written atomically)");
  app.add_flag("--resume", flags->train.checkpoint.resume,
               "Continue from the latest checkpoint in --checkpoint-dir (from scratch if "
               "there is none); same --seed repeats the uninterrupted run exactly");
  app.add_option("--metrics-out", flags->metrics_out,
                 "Write JSON lines to this file (rank 0): the run's settings and versions, one "
                 "record per epoch, then a final one with test_acc and totals. An existing "
                 "file is refused unless --resume (appends) or --force (replaces)");
  app.add_flag("--force", flags->force, "Let --metrics-out replace an existing file");
}

// What rank 0 prints while and after training: progress, checksums, the profile.
void add_report_flags(CLI::App& app, Flags* flags) {
  add_enum_option(app, "--progress", &flags->progress, progress_names(),
                  "auto, bar, lines or off. auto: a bar redrawn in place when stderr is a "
                  "terminal (or `partita launch` ran on one), else a line every "
                  "--progress-every seconds; rank 0 only; -q turns it off");
  app.add_option("--progress-every", flags->progress_every_s,
                 "Seconds between progress lines (--progress lines; 0: at every --log-every "
                 "report)")
      ->capture_default_str();
  app.add_option("--log-every", flags->log_every,
                 "Steps between progress reports (each reads the loss from the device once; "
                 "losses and accuracies otherwise stay there until the epoch ends). 0: once "
                 "per epoch; auto: every step under a progress bar, else once per epoch")
      ->capture_default_str();
  app.add_flag("--checksum", flags->checksum,
               "Print each rank's parameter fingerprint to stderr after training");
  app.add_flag("--profile", flags->train.profile,
               "After training, rank 0 prints to stderr where its steps' time went: a table of "
               "the step's stages (batch wait, batch to tensors, forward, loss, backward, "
               "gradient packing, allreduce, optimizer; the loader threads' sampling and "
               "fetch apart, as they overlap the steps) with total seconds, share and calls, "
               "and the 15 torch ops with the most self time (partita's kernels by name, e.g. "
               "partita::spmm_forward). Each rank profiles its own steps; evaluation is not "
               "profiled. Costs about 1 us per op; off, nothing is recorded");
}

}  // namespace

Action add_train_command(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  app.description(
      "Train a GNN for node classification on a partition directory, data-parallel: run "
      "under mpirun (or `partita launch`) with one rank per part, or any number of ranks on "
      "a 1-part directory, or (--servers P) P server ranks and any number of trainers. The "
      "first rank that trains prints one line per epoch (and progress on stderr, see "
      "--progress) and, last, test_acc=<accuracy>. 1 rank and P ranks train on the same "
      "global batches (one shuffle of all training ids, split by owner).");
  add_task_flags(app, flags.get());
  add_model_flags(app, flags.get());
  add_schedule_flags(app, flags.get());
  add_sampling_rule_flags(app, flags.get());
  add_placement_flags(app, flags.get());
  add_cache_flags(app, flags.get());
  add_evaluation_flags(app, flags.get());
  add_report_flags(app, flags.get());
  return [flags, &app] {
    const std::vector<std::string> given = run_settings(app).given;
    // Ctrl-C says how far the run got from the first moment on (interrupt_notice.h), on the
    // first rank that trains: world rank --servers (the servers come first), before MPI.
    std::unique_ptr<InterruptNotice> notice;
    if (launcher_rank() == flags->session.servers)
      notice = std::make_unique<InterruptNotice>(flags->train.checkpoint.dir);
    return run_rank([&](runtime::RankContext& rank) {
      settle_flags(app, given, rank, flags.get());
      return run_train(rank, *flags, notice.get());
    });
  };
}

}  // namespace partita::cli
