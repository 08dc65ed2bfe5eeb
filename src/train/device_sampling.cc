// Device sampling in the training loop: see partita/train/device_sampling.h.
#include "partita/train/device_sampling.h"

#include <ATen/record_function.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include <algorithm>
#include <optional>

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/train/device.h"

namespace partita::train {
namespace {

// Throws Error naming the first seed that appears twice (as sample::BlockBuilder; temporal,
// `times` not empty: the first (seed, time) pair).
void check_distinct(ArrayView<const int64_t> seeds, ArrayView<const int64_t> times) {
  if (times.empty()) {
    std::vector<int64_t> sorted(seeds.begin(), seeds.end());
    std::sort(sorted.begin(), sorted.end());
    const auto twice = std::adjacent_find(sorted.begin(), sorted.end());
    PARTITA_CHECK(twice == sorted.end(), Error, "sample: seed {} appears more than once", *twice);
    return;
  }
  PARTITA_CHECK(times.size() == seeds.size(), Error, "sample: {} seed times for {} seeds",
                times.size(), seeds.size());
  std::vector<std::pair<int64_t, int64_t>> sorted;
  for (int64_t i = 0; i < seeds.size(); ++i) sorted.emplace_back(seeds[i], times[i]);
  std::sort(sorted.begin(), sorted.end());
  const auto twice = std::adjacent_find(sorted.begin(), sorted.end());
  PARTITA_CHECK(twice == sorted.end(), Error, "sample: seed {} at time {} appears more than once",
                twice->first, twice->second);
}

// `values` (borrowed host memory) on `device`: asynchronously off the CPU (pinned first).
torch::Tensor to_device(ArrayView<const int64_t> values, const torch::Device& device) {
  torch::Tensor host =
      torch::from_blob(const_cast<int64_t*>(values.data()), {values.size()}, torch::kInt64);
  if (!device.is_cpu() && torch::cuda::is_available()) host = host.pin_memory();
  return host.to(torch::TensorOptions().device(device), /*non_blocking=*/!device.is_cpu(),
                 /*copy=*/true);
}

}  // namespace

std::string device_sampling_refusal(const runtime::Session& session, const TrainOptions& options) {
  if (options.task != Task::kNode)
    return "device sampling serves `task` node; link prediction samples on the host";
  if (options.model.kind == ModelKind::kHan)
    return "`model` han samples metapath neighbours, on the host only";
  if (session.role() == runtime::Role::kServer) return "a server samples for others, on the host";
  if (!session.holds_topology())
    return fmt::format(
        "this rank holds only its own part of the {}-part partition; device sampling needs "
        "the whole topology on every rank: pass `topology` full (each rank maps every part's "
        "in-edges; features stay with their owners)",
        session.graph().meta().num_parts);
  return "";
}

bool samples_on_device(const runtime::Session& session, const TrainOptions& options) {
  const SampleOn on = options.loader.sample_on;
  if (on == SampleOn::kHost) return false;
  const std::string refusal = device_sampling_refusal(session, options);
  if (on == SampleOn::kAuto) return !options.device.is_cpu() && refusal.empty();
  PARTITA_CHECK_PARAM(refusal.empty(), "sample_on", "device: {}", refusal);
  return true;
}

const DeviceSample* device_sample(const loader::Batch& batch) {
  const auto* blocks = dynamic_cast<const DeviceBatchBlocks*>(batch.device_blocks.get());
  return blocks != nullptr ? &blocks->sample : nullptr;
}

DeviceBlockSource::DeviceBlockSource(const std::vector<sample::CscView>& views, int num_relations,
                                     torch::Device device, const DeviceSourceOptions& options)
    : topology_(views, num_relations, device, options.weighted,
                options.temporal != sample::Temporal::kNone),
      sampler_(topology_),
      options_(options) {}

void DeviceBlockSource::build(ArrayView<const int64_t> seeds, const sample::BlockOptions& options,
                              bool degrees, loader::Batch& batch) {
  const bool temporal = options_.temporal != sample::Temporal::kNone;
  check_distinct(seeds, temporal ? options.seed_times : ArrayView<const int64_t>());
  const torch::Device device = topology_.device();
  // Off the CPU: a pool stream of this call (the copies and the sampling), synchronised by
  // the last host read below.
  std::optional<c10::StreamGuard> on_side;
  if (!device.is_cpu())
    on_side.emplace(c10::impl::getDeviceGuardImpl(device.type())->getStreamFromGlobalPool(device));
  const torch::Tensor on_device = to_device(seeds, device);
  auto blocks = std::make_shared<DeviceBatchBlocks>();
  DeviceSampleOptions sample_options;
  sample_options.degrees = degrees;
  sample_options.edge_ids = options_.edge_ids;
  sample_options.weighted = options_.weighted;
  if (temporal) {
    sample_options.temporal = options_.temporal;
    sample_options.strict = options_.strict;
    sample_options.seed_times = to_device(options.seed_times, device);
  }
  DeviceSample& sample = blocks->sample;
  sample = sampler_.sample(on_device, options, sample_options);
  batch.sampled.seeds.assign(seeds.begin(), seeds.end());
  if (temporal)
    batch.sampled.seed_times.assign(options.seed_times.begin(), options.seed_times.end());
  {
    // The input ids, and the edge ids after them: one copy.
    RECORD_USER_SCOPE(kHostReadScope);
    const torch::Tensor host =
        (options_.edge_ids ? torch::cat({sample.input_nodes, sample.edge_ids}) : sample.input_nodes)
            .to(torch::kCPU)
            .contiguous();
    ++sample.host_reads;
    const int64_t* read = host.data_ptr<int64_t>();
    const int64_t inputs = sample.input_nodes.numel();
    batch.sampled.input_nodes.assign(read, read + inputs);
    if (options_.edge_ids) blocks->edge_ids.assign(read + inputs, read + host.numel());
  }
  batch.device_blocks = std::move(blocks);
}

std::unique_ptr<DeviceBlockSource> make_device_block_source(const runtime::Session& session,
                                                            const TrainOptions& options) {
  if (!samples_on_device(session, options)) return nullptr;
  const store::DistGraph& graph = session.graph();
  DeviceSourceOptions source;
  source.edge_ids = options.loader.edge_features;
  source.weighted = session.sampler().options().weighting == sample::Weighting::kEdgeWeight;
  source.temporal = session.sampler().options().temporal;
  source.strict = session.sampler().options().strict;
  return std::make_unique<DeviceBlockSource>(
      session.topology_views(), graph.typed() ? graph.typed_meta().num_relations() : 0,
      options.device.is_cpu() ? torch::Device(torch::kCPU) : torch_device(options.device), source);
}

}  // namespace partita::train
