#include "partita/loader/batch_pipeline.h"

#include <utility>

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"

namespace partita::loader {

void check_pipeline_options(const BatchPipelineOptions& options) {
  PARTITA_CHECK_PARAM(options.threads >= 1 && options.threads <= kMaxPipelineThreads, "threads",
                      "must be in [1, {}], got {}", kMaxPipelineThreads, options.threads);
  PARTITA_CHECK_PARAM(options.prefetch >= 1 && options.prefetch <= kMaxPrefetch, "prefetch",
                      "must be in [1, {}], got {}", kMaxPrefetch, options.prefetch);
}

BatchPipeline::BatchPipeline(const BatchPipelineOptions& options,
                             std::vector<std::vector<int64_t>> batches,
                             sample::NeighborSampler& sampler, store::FeatureFetcher& fetcher)
    : options_(options),
      batches_(std::move(batches)),
      sampler_(sampler),
      fetcher_(fetcher),
      num_steps_(static_cast<int64_t>(batches_.size())) {
  check_pipeline_options(options_);
  PARTITA_CHECK(options_.feature_row_bytes >= 0, Error, "feature row bytes: must be >= 0, got {}",
                options_.feature_row_bytes);
  PARTITA_CHECK(options_.resident == nullptr || !options_.typed, Error,
                "internal: resident rows given for a typed graph");
  PARTITA_CHECK(options_.seed_times.empty() ||
                    (options_.temporal && options_.seed_times.size() == batches_.size()),
                Error, "internal: seed times for {} steps of {} (temporal: {})",
                options_.seed_times.size(), batches_.size(), options_.temporal);
  try {
    for (int t = 0; t < options_.threads; ++t) workers_.emplace_back([this] { run_worker(); });
  } catch (...) {
    stop();
    throw;
  }
}

BatchPipeline::~BatchPipeline() { stop(); }

void BatchPipeline::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  space_cv_.notify_all();
  ready_cv_.notify_all();
  for (std::thread& worker : workers_)
    if (worker.joinable()) worker.join();
  workers_.clear();
  std::lock_guard<std::mutex> lock(mu_);
  ready_.clear();  // nothing hands these out any more
}

std::optional<Batch> BatchPipeline::next() {
  std::unique_lock<std::mutex> lock(mu_);
  ready_cv_.wait(lock, [&] {
    return error_ || stopping_ || next_step_ >= num_steps_ || ready_.count(next_step_) > 0;
  });
  if (error_) {
    std::exception_ptr error = error_;
    lock.unlock();
    stop();
    std::rethrow_exception(error);
  }
  if (stopping_) return std::nullopt;  // stop() was called: batches still buffered are dropped
  auto it = ready_.find(next_step_);
  if (it == ready_.end()) return std::nullopt;  // past the last step
  Batch batch = std::move(it->second);
  ready_.erase(it);
  ++next_step_;
  lock.unlock();
  space_cv_.notify_all();
  return batch;
}

void BatchPipeline::run_worker() {
  sample::BlockBuilder builder;
  for (;;) {
    int64_t step;
    {
      std::unique_lock<std::mutex> lock(mu_);
      space_cv_.wait(lock, [&] {
        return stopping_ || next_claim_ >= num_steps_ ||
               next_claim_ < next_step_ + options_.prefetch;
      });
      if (stopping_ || next_claim_ >= num_steps_) return;
      step = next_claim_++;
    }
    try {
      Batch batch = build(step, builder);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) return;
        ready_.emplace(step, std::move(batch));
      }
      ready_cv_.notify_all();
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!error_) error_ = std::current_exception();
        stopping_ = true;
      }
      ready_cv_.notify_all();
      space_cv_.notify_all();
      return;
    }
  }
}

void BatchPipeline::fetch_typed_inputs(Batch& batch) {
  const store::DistGraph& graph = fetcher_.graph();
  const auto& input = batch.sampled.input_nodes;
  batch.typed_inputs.assign(static_cast<size_t>(graph.num_node_types()), TypedInput{});
  for (size_t i = 0; i < input.size(); ++i)
    batch.typed_inputs[static_cast<size_t>(graph.node_type(input[i]))].positions.push_back(
        static_cast<int64_t>(i));
  // Every type's rows in one round of requests (FeatureFetcher::fetch_typed_features).
  std::vector<std::vector<int64_t>> ids(static_cast<size_t>(graph.num_node_types()));
  std::vector<ArrayView<const int64_t>> views(ids.size());
  std::vector<uint8_t*> out(ids.size(), nullptr);
  for (int t = 0; t < graph.num_node_types(); ++t) {
    TypedInput& typed = batch.typed_inputs[static_cast<size_t>(t)];
    const int64_t row_bytes = graph.type_feature_row_bytes(t);
    if (row_bytes == 0 || typed.positions.empty()) continue;
    std::vector<int64_t>& type_ids = ids[static_cast<size_t>(t)];
    type_ids.reserve(typed.positions.size());
    for (int64_t pos : typed.positions) type_ids.push_back(input[static_cast<size_t>(pos)]);
    typed.features.resize(type_ids.size() * static_cast<size_t>(row_bytes));
    views[static_cast<size_t>(t)] = type_ids;
    out[static_cast<size_t>(t)] = typed.features.data();
  }
  fetcher_.fetch_typed_features(views, out);
}

void BatchPipeline::fetch_edge_features(Batch& batch) {
  if (batch.device_blocks != nullptr) {
    const ArrayView<const int64_t> ids = batch.device_blocks->host_edge_ids();
    PARTITA_CHECK(ids.size() == batch.device_blocks->num_edges(), Error,
                  "loader: edge features asked for, but the block source gives {} edge ids for "
                  "{} edges (build it with edge ids)",
                  ids.size(), batch.device_blocks->num_edges());
    batch.edge_features.resize(static_cast<size_t>(ids.size() * options_.edge_feature_row_bytes));
    fetcher_.fetch_edge_features(ids, batch.edge_features.data());
    return;
  }
  std::vector<int64_t> ids;
  ids.reserve(static_cast<size_t>(batch.sampled.num_sampled_edges()));
  for (size_t l = 0; l < batch.sampled.blocks.size(); ++l) {
    const sample::Block& block = batch.sampled.blocks[l];
    PARTITA_CHECK(block.edge_ids.size() == block.indices.size(), Error,
                  "loader: edge features asked for, but block {} carries {} edge ids for {} "
                  "edges (sample with edge ids)",
                  l, block.edge_ids.size(), block.indices.size());
    ids.insert(ids.end(), block.edge_ids.begin(), block.edge_ids.end());
  }
  batch.edge_features.resize(ids.size() * static_cast<size_t>(options_.edge_feature_row_bytes));
  fetcher_.fetch_edge_features(ids, batch.edge_features.data());
}

Batch BatchPipeline::build(int64_t step, sample::BlockBuilder& builder) {
  Batch batch(options_.feature_memory);
  batch.step = step;
  const std::vector<int64_t>& seeds = batches_[static_cast<size_t>(step)];
  if (seeds.empty()) return batch;
  sample::BlockOptions block_options;
  block_options.fanouts = options_.fanouts;
  block_options.key = {options_.seed, options_.epoch, static_cast<uint64_t>(step)};

  Stopwatch watch;
  std::vector<int64_t> seed_times;
  if (!options_.seed_times.empty()) {
    const std::vector<int64_t>& given = options_.seed_times[static_cast<size_t>(step)];
    PARTITA_CHECK(given.size() == seeds.size(), Error,
                  "internal: step {} has {} seed times for {} seeds", step, given.size(),
                  seeds.size());
    block_options.seed_times = given;
  } else if (options_.temporal) {
    seed_times.resize(seeds.size());
    fetcher_.fetch_node_times(seeds, seed_times.data());
    block_options.seed_times = seed_times;
  }
  if (options_.block_source != nullptr)
    options_.block_source->build(seeds, block_options, options_.fetch_degrees, batch);
  else
    batch.sampled = builder.build(seeds, block_options, sampler_);
  batch.sample_s = watch.seconds();

  watch.restart();
  const auto& input = batch.sampled.input_nodes;
  if (options_.typed) {
    fetch_typed_inputs(batch);
  } else if (options_.resident != nullptr) {
    batch.resident.set = options_.resident;
    fetcher_.fetch_features_except(input, *options_.resident, &batch.resident.hits,
                                   &batch.features);
  } else {
    batch.features.resize(input.size() * static_cast<size_t>(options_.feature_row_bytes));
    fetcher_.fetch_features(input, batch.features.data());
  }
  if (options_.edge_feature_row_bytes > 0) fetch_edge_features(batch);
  if (options_.fetch_labels) {
    batch.labels.resize(batch.sampled.seeds.size());
    fetcher_.fetch_labels(batch.sampled.seeds, batch.labels.data());
  }
  if (options_.fetch_degrees && options_.block_source == nullptr) {
    batch.degrees.resize(input.size());
    fetcher_.fetch_degrees(input, batch.degrees.data());
  }
  batch.fetch_s = watch.seconds();
  return batch;
}

}  // namespace partita::loader
