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

// Throws Error naming the first seed that appears twice (as sample::BlockBuilder).
void check_distinct(ArrayView<const int64_t> seeds) {
  std::vector<int64_t> sorted(seeds.begin(), seeds.end());
  std::sort(sorted.begin(), sorted.end());
  const auto twice = std::adjacent_find(sorted.begin(), sorted.end());
  PARTITA_CHECK(twice == sorted.end(), Error, "sample: seed {} appears more than once", *twice);
}

}  // namespace

std::string device_sampling_refusal(const runtime::Session& session, const TrainOptions& options) {
  if (options.task != Task::kNode)
    return "device sampling serves `task` node; link prediction samples on the host";
  if (options.model.kind == ModelKind::kHan)
    return "`model` han samples metapath neighbours, on the host only";
  if (session.role() == runtime::Role::kServer) return "a server samples for others, on the host";
  if (session.sampler().options().temporal != sample::Temporal::kNone)
    return "the device sampler has no edge times yet: `temporal` samples on the host";
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
    : topology_(views, num_relations, device, options.weighted),
      sampler_(topology_),
      options_(options) {}

void DeviceBlockSource::build(ArrayView<const int64_t> seeds, const sample::BlockOptions& options,
                              bool degrees, loader::Batch& batch) {
  check_distinct(seeds);
  const torch::Device device = topology_.device();
  // Off the CPU: a pool stream of this call (the copies and the sampling), synchronised by
  // the last host read below.
  std::optional<c10::StreamGuard> on_side;
  if (!device.is_cpu())
    on_side.emplace(c10::impl::getDeviceGuardImpl(device.type())->getStreamFromGlobalPool(device));
  torch::Tensor host_seeds =
      torch::from_blob(const_cast<int64_t*>(seeds.data()), {seeds.size()}, torch::kInt64);
  if (!device.is_cpu() && torch::cuda::is_available()) host_seeds = host_seeds.pin_memory();
  const torch::Tensor on_device = host_seeds.to(torch::TensorOptions().device(device),
                                                /*non_blocking=*/!device.is_cpu(), /*copy=*/true);
  auto blocks = std::make_shared<DeviceBatchBlocks>();
  DeviceSampleOptions sample_options;
  sample_options.degrees = degrees;
  sample_options.edge_ids = options_.edge_ids;
  sample_options.weighted = options_.weighted;
  DeviceSample& sample = blocks->sample;
  sample = sampler_.sample(on_device, options, sample_options);
  batch.sampled.seeds.assign(seeds.begin(), seeds.end());
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
  return std::make_unique<DeviceBlockSource>(
      session.topology_views(), graph.typed() ? graph.typed_meta().num_relations() : 0,
      options.device.is_cpu() ? torch::Device(torch::kCPU) : torch_device(options.device), source);
}

}  // namespace partita::train
