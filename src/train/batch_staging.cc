// Moving a batch to the model's device: see batch_staging.h.
#include "partita/train/batch_staging.h"

#include <ATen/record_function.h>
#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include <algorithm>

#include "feature_tensors.h"
#include "host_tensor_memory.h"
#include "partita/core/error.h"
#include "partita/nn/kernel_path.h"
#include "partita/train/device_feature_cache.h"
#include "partita/train/device_sampling.h"

namespace partita::train {
namespace {

const c10::impl::DeviceGuardImplInterface& guard_impl(const torch::Device& device) {
  return *c10::impl::getDeviceGuardImpl(device.type());
}

}  // namespace

BatchStaging::BatchStaging(torch::Device device) : device_(device) {
  if (device_.is_cpu()) return;
  pin_ = torch::cuda::is_available();
  side_ = guard_impl(device_).getStreamFromGlobalPool(device_);
  if (pin_) feature_memory_ = std::make_unique<HostTensorMemory>(/*pinned=*/true);
}

BatchStaging::~BatchStaging() = default;

std::pmr::memory_resource* BatchStaging::feature_memory() { return feature_memory_.get(); }

torch::Tensor BatchStaging::to_device(const torch::Tensor& host) {
  if (on_cpu() || !host.defined()) return host;
  const c10::impl::DeviceGuardImplInterface& impl = guard_impl(device_);
  const c10::Stream compute = impl.getStream(device_);
  const torch::Tensor source = pin_ && !host.is_pinned() ? host.pin_memory() : host;
  torch::Tensor out;
  {
    c10::StreamGuard on_side(*side_);
    out = source.to(device_, /*non_blocking=*/pin_);
  }
  out.record_stream(compute);
  pending_ = true;
  return out;
}

nn::BlockTensors BatchStaging::to_device(nn::BlockTensors host) {
  if (on_cpu()) return host;
  for (torch::Tensor* x :
       {&host.indptr, &host.indices, &host.edge_dst, &host.deg_dst, &host.deg_src, &host.t_indptr,
        &host.t_dst, &host.t_eid, &host.graph_deg, &host.etypes, &host.rel_offsets,
        &host.rel_row_dst, &host.rel_indptr, &host.rel_src, &host.t_rel_row, &host.t_rel_entry})
    *x = to_device(*x);
  return host;
}

std::vector<nn::BlockTensors> BatchStaging::to_device(std::vector<nn::BlockTensors> host) {
  if (on_cpu()) return host;
  for (nn::BlockTensors& b : host) b = to_device(std::move(b));
  return host;
}

void BatchStaging::ready() {
  if (on_cpu() || !pending_) return;
  const c10::Stream compute = guard_impl(device_).getStream(device_);
  c10::Event copied(device_.type());
  copied.record(*side_);
  copied.block(compute);
  pending_ = false;
}

std::vector<nn::BlockTensors> BatchStaging::blocks(const loader::Batch& batch) {
  if (const DeviceSample* sampled = device_sample(batch)) return sampled_blocks(*sampled);
  const std::vector<sample::Block>& raw = batch.sampled.blocks;
  const std::vector<int64_t>* degrees = batch.degrees.empty() ? nullptr : &batch.degrees;
  const bool typed =
      std::any_of(raw.begin(), raw.end(), [](const sample::Block& b) { return !b.etypes.empty(); });
  if (!nn::uses_generic_ops(device_) || typed) {
    // The fused kernels' blocks, built on the CPU (typed blocks' relation fields too), moved.
    return to_device(degrees == nullptr ? nn::to_block_tensors(raw)
                                        : nn::to_block_tensors(raw, *degrees));
  }
  // The index arrays in one copy on the side stream; the rest derived on the device.
  RECORD_USER_SCOPE("partita::to_block_tensors");  // a stage of train/step_profile.h
  const nn::PackedBlocks packed = nn::pack_blocks(raw, degrees, pin_);
  const torch::Tensor data = to_device(packed.host);
  ready();
  return nn::unpack_blocks(packed, data);
}

std::vector<nn::BlockTensors> BatchStaging::sampled_blocks(const DeviceSample& sampled) {
  std::vector<nn::BlockTensors> blocks = sampled.blocks;
  PARTITA_CHECK(blocks.empty() || blocks[0].indptr.device() == device_, Error,
                "internal: blocks sampled on {} for a model on {}", blocks[0].indptr.device().str(),
                device_.str());
  if (on_cpu()) return blocks;
  // Sampled on another stream, complete (device_sampling.h): only the allocator must learn
  // that the compute stream uses them.
  const c10::Stream compute = guard_impl(device_).getStream(device_);
  for (nn::BlockTensors& b : blocks)
    for (torch::Tensor* x :
         {&b.indptr, &b.indices, &b.edge_dst, &b.deg_dst, &b.deg_src, &b.t_indptr, &b.t_dst,
          &b.t_eid, &b.graph_deg, &b.etypes, &b.rel_offsets, &b.rel_row_dst, &b.rel_indptr,
          &b.rel_src, &b.t_rel_row, &b.t_rel_entry})
      if (x->defined()) x->record_stream(compute);
  return blocks;
}

torch::Tensor BatchStaging::features(loader::Batch& batch, const store::DistGraph& graph,
                                     bool normalize, bool bf16_model,
                                     const DeviceFeatureCache* cache) {
  RECORD_USER_SCOPE("partita::features_tensor");  // a stage of train/step_profile.h
  // The fetched rows (every input's without a device cache), then the cached ones in place.
  const int64_t rows = loader::fetched_feature_rows(batch);
  const auto type = torch_type_of(graph.feature_dtype());
  // The loader's own pinned buffer when it gathered into feature_memory(): the host
  // allocator then sees the copy read it and keeps it until the copy is done.
  const torch::Tensor pinned =
      feature_memory_ != nullptr
          ? feature_memory_->tensor_of(batch.features.data(),
                                       static_cast<int64_t>(batch.features.size()))
          : torch::Tensor();
  torch::Tensor x = to_device(
      pinned.defined() ? pinned.view(type).view({rows, graph.feat_dim()})
                       : torch::from_blob(batch.features.data(), {rows, graph.feat_dim()}, type));
  // With a cache, its placement indices travel with the rows.
  const torch::Tensor places =
      cache != nullptr ? to_device(cache->placement(batch)) : torch::Tensor();
  ready();  // the assembly and the widening below run on the compute stream
  x = cache != nullptr ? cache->assemble(batch, x, places) : with_cached_rows(nullptr, batch, x);
  const bool keep = !normalize && bf16_model && graph.feature_dtype() == DType::kBFloat16;
  if (!keep) x = x.to(torch::kFloat32);
  if (!normalize) return x;
  // An Error, not a usage error: one rank meets the row mid-training, alone. The parameter
  // is backquoted, so that a front end names it in its words (core/parameter_error.h).
  return row_normalized(x, [&batch](int64_t row, double sum) {
    return fmt::format(
        "`normalize_features`: the features of node {} (partition id) sum to {:g}; row "
        "normalization divides each row by its sum and needs non-negative features (as "
        "bag-of-words); leave it off for these features",
        batch.sampled.input_nodes[static_cast<size_t>(row)], sum);
  });
}

}  // namespace partita::train
