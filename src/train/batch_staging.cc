// Moving a batch to the model's device: see batch_staging.h.
#include "partita/train/batch_staging.h"

#include <ATen/record_function.h>
#include <c10/core/Event.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include "feature_tensors.h"
#include "host_tensor_memory.h"
#include "partita/core/error.h"
#include "partita/nn/block_transfer.h"
#include "partita/train/device_feature_cache.h"
#include "partita/train/device_sampling.h"

namespace partita::train {
namespace {

const c10::impl::DeviceGuardImplInterface& guard_impl(const torch::Device& device) {
  return *c10::impl::getDeviceGuardImpl(device.type());
}

// nn's block copies (nn/block_transfer.h) through staging.to_device, the packed buffer pinned
// when `pin`; then staging.ready() when `then_ready`.
nn::BlockTransfer transfer_of(BatchStaging& staging, bool pin, bool then_ready) {
  return {staging.device(), pin, [&staging, then_ready](const torch::Tensor& host) {
            torch::Tensor copy = staging.to_device(host);
            if (then_ready) staging.ready();
            return copy;
          }};
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
  std::vector<nn::BlockTensors> one{std::move(host)};
  return std::move(to_device(std::move(one))[0]);
}

std::vector<nn::BlockTensors> BatchStaging::to_device(std::vector<nn::BlockTensors> host) {
  if (on_cpu()) return host;
  nn::move_blocks(host, nullptr, transfer_of(*this, pin_, /*then_ready=*/false));
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
  const std::vector<int64_t>* degrees = batch.degrees.empty() ? nullptr : &batch.degrees;
  // One copy on the side stream, then ready(): what is derived from it runs on the compute
  // stream.
  return nn::blocks_on_device(batch.sampled.blocks, degrees,
                              transfer_of(*this, pin_, /*then_ready=*/true));
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
  for (nn::BlockTensors& b : blocks) {
    nn::for_each_tensor(
        [&compute](const char*, torch::Tensor& x) {
          if (x.defined()) x.record_stream(compute);
        },
        b);
  }
  return blocks;
}

void BatchStaging::edge_features(const loader::Batch& batch, const store::DistGraph& graph,
                                 std::vector<nn::BlockTensors>& blocks) {
  // Host blocks or device blocks (then batch.sampled.blocks is empty): their tensors' edges.
  const size_t sampled =
      batch.device_blocks != nullptr ? blocks.size() : batch.sampled.blocks.size();
  PARTITA_CHECK(sampled == blocks.size(), Error,
                "internal: edge features of {} sampled blocks for {} block tensors", sampled,
                blocks.size());
  const int64_t dim = graph.edge_feat_dim();
  const int64_t edges = loader::num_sampled_edges(batch);
  PARTITA_CHECK(
      static_cast<int64_t>(batch.edge_features.size()) == edges * graph.edge_feat_row_bytes(),
      Error, "internal: {} bytes of edge features for {} edges of {} bytes",
      batch.edge_features.size(), edges, graph.edge_feat_row_bytes());
  // The loader's rows, borrowed: the batch outlives the step (as features()' rows).
  torch::Tensor x =
      to_device(torch::from_blob(const_cast<uint8_t*>(batch.edge_features.data()), {edges, dim},
                                 torch_type_of(graph.edge_feat_dtype())));
  ready();
  x = x.to(torch::kFloat32);
  int64_t offset = 0;
  for (size_t l = 0; l < blocks.size(); ++l) {
    const int64_t n = blocks[l].num_edges();
    blocks[l].edge_feat = x.narrow(0, offset, n);
    offset += n;
  }
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
