// Trainer: the epoch loop over the seams of training (see partita/train/trainer.h).
#include "partita/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <optional>

#include "partita/core/error.h"
#include "partita/core/random.h"
#include "partita/core/timer.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/cache_warmup.h"
#include "partita/loader/hot_nodes.h"
#include "partita/loader/seed_plans.h"
#include "partita/nn/kernel_path.h"
#include "partita/nn/precision.h"
#include "partita/train/batch_staging.h"
#include "partita/train/checkpointer.h"
#include "partita/train/device.h"
#include "partita/train/device_feature_cache.h"
#include "partita/train/device_sampling.h"
#include "partita/train/gradient_sync.h"
#include "partita/train/model_adapter.h"
#include "partita/train/step_profile.h"
#include "partita/train/train_task.h"
#include "resolved_options.h"

namespace partita::train {
namespace {

// Sampling-key epochs of evaluation passes, far from training epochs.
constexpr uint64_t kEvalTagBase = uint64_t{1} << 40;
// Sampling-key epoch of the cache's pre-sampling, apart from training and evaluation.
constexpr uint64_t kCacheTag = kEvalTagBase - 2;  // the test pass uses kEvalTagBase - 1
// Stream tag of the per-step dropout keys.
constexpr uint64_t kDropoutStream = 0x64726f706f7574ULL;

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainOptions& o,
                                                        const std::vector<torch::Tensor>& params) {
  const OptimizerOptions& opt = o.optimizer;
  if (opt.kind == OptimizerKind::kAdam)
    return std::make_unique<torch::optim::Adam>(
        params, torch::optim::AdamOptions(opt.lr).weight_decay(opt.weight_decay));
  return std::make_unique<torch::optim::SGD>(
      params, torch::optim::SGDOptions(opt.lr).weight_decay(opt.weight_decay));
}

}  // namespace

Trainer::Trainer(runtime::Session& session, const TrainOptions& options)
    : session_(session), options_(resolved_options(session.graph(), options)) {
  check_options(options_);
  check_sampling_rule(options_, session_.sampler().options());
  // --sample-on device where it cannot run is refused here for every task (the node task
  // then builds its source).
  if (options_.loader.sample_on == SampleOn::kDevice) samples_on_device(session_, options_);
  torch::set_num_threads(std::max(1, options_.torch_threads));
  // The batch plans (see the header): every rank learns every id of every split.
  task_ = make_task(session_, options_);
  model_ = build_model(model_context(session_, options_));
  sync_ = std::make_unique<GradientSync>(session_.collectives(), model_->module().parameters(),
                                         options_.bucket_bytes);
  sync_->broadcast_initial_weights();

  loader::CacheWarmupOptions cw;
  cw.ratio = options_.cache.ratio;
  cw.presample_batches = options_.cache.presample_batches;
  cw.fanouts = options_.loader.fanouts;
  cw.seed = options_.seed;
  cw.epoch = kCacheTag;
  cw.trainers = session_.size();
  cw.temporal = session_.sampler().options().temporal;
  cw.edge_features = options_.loader.edge_features;
  loader::CacheWarmup warm = loader::warm_feature_cache(
      task_->sampler(), session_.fetcher(), session_.graph(), task_->plan(),
      loader::SeedShare(session_.graph(), session_.rank(), session_.size()), cw);
  if (warm.built) {
    cache_ = std::move(warm.cache);
    session_.fetcher().set_cache(&cache_);
    cache_report_ = {cache_.rows(), cache_.bytes(), warm.seconds, warm.presample_batches,
                     warm.expected_hit_rate};
    if (options_.loader.edge_features) {
      edge_cache_ = std::move(warm.edge_cache);
      session_.fetcher().set_edge_cache(&edge_cache_);
      cache_report_.edge_rows = edge_cache_.rows();
      cache_report_.edge_bytes = edge_cache_.bytes();
      cache_report_.edge_expected_hit_rate = warm.edge_expected_hit_rate;
    }
  }
  warm_device_cache(cw);
  optimizer_ = make_optimizer(options_, sync_->params());
  checkpointer_ = std::make_unique<Checkpointer>(session_, options_);
  if (options_.profile) profile_ = std::make_unique<StepProfile>(model_->staging().device());
}

Trainer::~Trainer() {
  session_.fetcher().set_cache(nullptr);
  session_.fetcher().set_edge_cache(nullptr);
  if (model_) model_->set_device_cache(nullptr);
}

void Trainer::warm_device_cache(const loader::CacheWarmupOptions& host_options) {
  if (options_.cache.gpu_ratio == 0) return;
  loader::CacheWarmupOptions options = host_options;
  options.ratio = options_.cache.gpu_ratio;
  const store::DistGraph& graph = session_.graph();
  const torch::Device device = model_->staging().device();
  DeviceCacheReport& r = device_cache_report_;
  if (options_.cache.gpu_ratio == kGpuCacheAuto) {
    // As many rows as fit in a share of the device's free memory (after the model), any
    // node's; every owned row when they all fit (CacheWarmupOptions::rows).
    r.free_bytes = free_memory_bytes(device);
    options.ratio = 0;
    options.rows = auto_cache_rows(r.free_bytes, graph.feature_row_bytes(), graph.num_nodes());
    r.budget_rows = options.rows;
  }
  Stopwatch watch;
  loader::DeviceRowsWarmup warm = loader::warm_device_rows(
      task_->sampler(), session_.fetcher(), session_.graph(), task_->plan(),
      loader::SeedShare(session_.graph(), session_.rank(), session_.size()), options);
  device_cache_ = std::make_unique<DeviceFeatureCache>(
      std::move(warm.resident), warm.rows, graph.feat_dim(), graph.feature_dtype(), device);
  model_->set_device_cache(device_cache_.get());
  r.device = device_cache_->device().str();
  r.rows = device_cache_->rows();
  r.remote_rows = warm.remote_rows;
  r.bytes = device_cache_->bytes();
  r.presample_s = watch.seconds();
  r.presample_batches = warm.presample_batches;
  r.expected_hit_rate = warm.expected_hit_rate;
  r.expected_remote_hit_rate = warm.expected_remote_hit_rate;
}

nn::GnnModel& Trainer::model() {
  PARTITA_CHECK(model_->gnn() != nullptr, Error, "internal: model() of an R-GCN trainer");
  return *model_->gnn();
}

torch::nn::Module& Trainer::module() { return model_->module(); }
int64_t Trainer::steps_per_epoch() const { return task_->plan().steps(); }
int64_t Trainer::num_train_ids() const { return task_->plan().num_ids(); }

EpochRecord Trainer::run_epoch(int64_t epoch,
                               const std::function<void(const StepRecord&)>& on_step) {
  const loader::GlobalBatches& plan = task_->plan();
  EpochRecord rec;
  rec.epoch = epoch + 1;
  const int64_t steps = options_.loader.max_steps > 0
                            ? std::min(plan.steps(), options_.loader.max_steps)
                            : plan.steps();
  rec.steps = steps;

  std::vector<std::vector<int64_t>> epoch_seeds = task_->epoch_seeds(epoch);
  loader::BatchPipelineOptions pipeline_settings =
      pipeline_options(session_, options_, *model_, task_->needs_labels(),
                       static_cast<uint64_t>(epoch), task_->block_source());
  pipeline_settings.seed_times = task_->epoch_seed_times();
  loader::BatchPipeline pipeline(pipeline_settings, std::move(epoch_seeds), task_->sampler(),
                                 session_.fetcher());
  model_->module().train();
  Stopwatch epoch_watch;
  // The step losses and the classified-right counts accumulate on the model's device and
  // are read on the host only at the progress records (on_step, options.log_every) and at
  // the end of the epoch: a step enqueues its work and never waits for the device. The sum
  // is float64 over the float32 step losses, as a host sum would be.
  const torch::TensorOptions on_device = torch::TensorOptions().device(model_->staging().device());
  torch::Tensor loss_sum = torch::zeros({1}, on_device.dtype(torch::kFloat64));
  torch::Tensor correct = torch::zeros({1}, on_device.dtype(torch::kInt64));
  int64_t total = 0, seeds_done = 0, reported_steps = 0;
  double reported_sum = 0;
  ModelAdapter& stepped = profile_ ? profile_->wrap(*model_) : *model_;
  std::optional<OpRecording> ops(std::in_place,
                                 profile_.get());  // with options.profile: the steps' torch ops
  for (int64_t step = 0; step < steps; ++step) {
    StageClock clock(profile_.get());
    std::optional<loader::Batch> batch = pipeline.next();
    PARTITA_CHECK(batch.has_value(), Error, "internal: batch pipeline ended at step {} of {}", step,
                  steps);
    rec.wait_s += clock.lap(Lap::kBatchWait);
    // No gradient yet (as torch 2's zero_grad(set_to_none)): backward stores the first one
    // instead of adding it to zeros, with no op per parameter here.
    for (const torch::Tensor& p : sync_->params()) p.mutable_grad() = torch::Tensor();
    torch::Tensor local_loss;  // undefined: a rank without seeds in this step adds 0
    // Dropout masks: a function of (seed, epoch, step, rank), so a resumed run repeats them.
    model_->set_dropout_key(stream_key(options_.seed, static_cast<uint64_t>(epoch),
                                       static_cast<uint64_t>(step),
                                       static_cast<uint64_t>(session_.rank()), kDropoutStream));
    // The exact mean over this step's global batch, the last (shorter) one included.
    const int64_t global_batch = plan.batch_size(step);
    rec.sample_s += batch->sample_s;
    rec.fetch_s += batch->fetch_s;
    if (profile_) profile_->add_loader(batch->sample_s, batch->fetch_s);
    rec.compute_s += clock.lap(Lap::kStepSetup);
    if (!batch->sampled.seeds.empty()) {
      double flops = 0;
      const StepLoss out = task_->step_loss(*batch, step, global_batch, stepped, &flops);
      rec.compute_s += clock.lap(Lap::kForwardLoss);
      rec.matmul_gflop += flops * 1e-9;
      out.loss.backward();
      local_loss = out.loss.detach();
      correct.add_(out.correct);
      total += out.total;
      rec.compute_s += clock.lap(Lap::kBackward);
      model_->after_backward();
      rec.compute_s += clock.lap(Lap::kAfterBackward);
    } else {
      model_->idle_training_step();  // HAN's per-layer sums; nothing for other models
      rec.compute_s += clock.lap(Lap::kBackward);
    }
    const torch::Tensor step_loss = sync_->sum_gradients(local_loss);
    rec.allreduce_s += clock.lap(Lap::kGradientSum);
    model_->after_gradient_sum();
    rec.allreduce_s += clock.lap(Lap::kAfterGradients);
    optimizer_->step();
    ++weight_updates_;
    loss_sum.add_(step_loss);  // float32 into float64: exact
    rec.compute_s += clock.lap(Lap::kOptimizer);
    seeds_done += global_batch;
    const bool report =
        static_cast<bool>(on_step) &&
        (step + 1 == steps || (options_.log_every > 0 && (step + 1) % options_.log_every == 0));
    if (report) {
      // The record's one host read: the loss sum, whose growth since the last record is
      // these steps' losses (exactly: float32 losses add up without rounding in float64).
      const double sum = loss_sum.item<double>();
      const double loss = (sum - reported_sum) / static_cast<double>(step + 1 - reported_steps);
      reported_sum = sum;
      reported_steps = step + 1;
      on_step(StepRecord{rec.epoch, step + 1, steps, loss, seeds_done, epoch_watch.seconds()});
    }
  }
  ops.reset();  // what follows is the epoch's, not a step's
  // The epoch's reads, before its time is taken: they wait for the device to finish the
  // steps the host has queued.
  const double loss_total = loss_sum.item<double>();
  std::vector<int64_t> counts{correct.item<int64_t>(), total};
  sync_->average_buffers(model_->module());
  rec.epoch_s = epoch_watch.seconds();
  rec.loss = steps > 0 ? loss_total / static_cast<double>(steps) : 0.0;
  rec.seeds = seeds_done;
  session_.collectives().allreduce_sum(counts);
  rec.train_acc =
      counts[1] > 0 ? static_cast<double>(counts[0]) / static_cast<double>(counts[1]) : 0.0;
  return rec;
}

TrainResult Trainer::train(const std::function<void(const EpochRecord&)>& on_epoch,
                           const std::function<void(const StepRecord&)>& on_step,
                           const std::function<void(int64_t)>& on_epoch_start) {
  // Which implementation nn's ops run, on this thread (training, evaluation, inference).
  nn::KernelPathScope kernels(options_.kernels);
  TrainResult result;
  result.cache = cache_report_;
  result.device_cache = device_cache_report_;
  result.eval = name_of(eval_mode_names(), options_.eval.mode).c_str();
  result.sample_on = task_->block_source() != nullptr ? "device" : "host";
  Stopwatch watch;
  if (options_.checkpoint.resume) {
    result.resumed_epochs =
        checkpointer_->restore(model_->module(), *optimizer_, model_->config_signature());
    ++weight_updates_;  // new weights: full-graph predictions made before are stale
  } else if (checkpointer_->enabled()) {
    checkpointer_->refuse_existing();
  }
  for (int64_t e = result.resumed_epochs; e < options_.epochs; ++e) {
    const uint64_t requests_before = session_.request_bytes_sent();
    const store::FetchStats fetch_before = session_.fetcher().stats();
    const uint64_t collectives_before = session_.collectives().bytes_contributed();
    if (on_epoch_start) on_epoch_start(e + 1);
    EpochRecord rec = run_epoch(e, on_step);
    const bool last = e + 1 == options_.epochs;
    if (options_.eval.every > 0 && ((e + 1) % options_.eval.every == 0 || last)) {
      Stopwatch eval_watch;
      rec.validated = true;
      rec.val_acc =
          task_->validate(*model_, kEvalTagBase + static_cast<uint64_t>(e), weight_updates_);
      rec.eval_s = eval_watch.seconds();
    }
    rec.request_bytes = static_cast<int64_t>(session_.request_bytes_sent() - requests_before);
    rec.collective_bytes =
        static_cast<int64_t>(session_.collectives().bytes_contributed() - collectives_before);
    const store::FetchStats fetch_after = session_.fetcher().stats();
    rec.remote_rows = fetch_after.remote_rows - fetch_before.remote_rows;
    rec.cache_hits = fetch_after.cache_hits - fetch_before.cache_hits;
    rec.edge_cache_hits = fetch_after.edge_cache_hits - fetch_before.edge_cache_hits;
    rec.remote_bytes = fetch_after.remote_bytes - fetch_before.remote_bytes;
    rec.gpu_cache_lookups = fetch_after.resident_lookups - fetch_before.resident_lookups;
    rec.gpu_cache_hits = fetch_after.resident_hits - fetch_before.resident_hits;
    rec.gpu_cache_remote_hits =
        fetch_after.resident_remote_hits - fetch_before.resident_remote_hits;
    if (checkpointer_->enabled()) {
      Stopwatch checkpoint_watch;
      checkpointer_->save(e + 1, model_->module(), *optimizer_, model_->config_signature());
      rec.checkpoint_s = checkpoint_watch.seconds();
    }
    rec.rss_bytes = current_rss_bytes();
    rec.threads = thread_count();
    rec.open_fds = open_fd_count();
    result.epochs.push_back(rec);
    if (on_epoch) on_epoch(result.epochs.back());
  }
  task_->test(*model_, kEvalTagBase - 1, weight_updates_, result);
  result.train_s = watch.seconds();
  if (profile_) result.profile = profile_->report();
  return result;
}

double Trainer::parameter_checksum() const {
  torch::NoGradGuard no_grad;
  double sum = 0;
  for (const auto& p : sync_->params()) {
    torch::Tensor flat = p.detach().reshape(-1).to(torch::kCPU).to(torch::kFloat64);
    torch::Tensor w = torch::arange(flat.numel(), torch::kInt64).remainder(7).add(1);
    sum += (flat * w.to(torch::kFloat64)).sum().item<double>();
  }
  return sum;
}

}  // namespace partita::train
