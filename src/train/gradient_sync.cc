// Gradient synchronization: see partita/train/gradient_sync.h.
#include "partita/train/gradient_sync.h"

#include <torch/cuda.h>

#include <utility>

namespace partita::train {
namespace {

// A host tensor like `like` (its dtype and element count), pinned when CUDA is available so
// that copies from and to the device run at full speed.
torch::Tensor host_tensor_like(const torch::Tensor& like) {
  return torch::empty(
      {like.numel()},
      torch::TensorOptions().dtype(like.scalar_type()).pinned_memory(torch::cuda::is_available()));
}

}  // namespace

GradientSync::GradientSync(Collectives& coll, std::vector<torch::Tensor> params,
                           size_t bucket_bytes)
    : coll_(coll), params_(std::move(params)), bucket_bytes_(bucket_bytes) {}

torch::Tensor GradientSync::to_host(const torch::Tensor& flat, torch::Tensor* buffer) {
  if (flat.is_cpu()) return flat;
  if (!buffer->defined() || buffer->numel() != flat.numel() ||
      buffer->scalar_type() != flat.scalar_type())
    *buffer = host_tensor_like(flat);
  buffer->copy_(flat);  // blocking: MPI reads the buffer next
  return *buffer;
}

void GradientSync::from_host(torch::Tensor& flat, const torch::Tensor& host) {
  if (flat.data_ptr() != host.data_ptr()) flat.copy_(host);
}

// Rank != 0 contributes zeros to an allreduce sum, so every rank ends with rank 0's values.
void GradientSync::broadcast_initial_weights() {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (const auto& p : params_) parts.push_back(p.detach().reshape(-1));
  torch::Tensor flat = torch::cat(parts).contiguous();
  if (coll_.rank() != 0) flat.zero_();
  torch::Tensor host = to_host(flat, &host_flat_);
  coll_.allreduce(host.data_ptr<float>(), static_cast<size_t>(host.numel()));
  from_host(flat, host);
  int64_t offset = 0;
  for (auto& p : params_) {
    p.copy_(flat.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
}

torch::Tensor GradientSync::sum_gradients(const torch::Tensor& loss) {
  torch::NoGradGuard no_grad;  // (the loss's view below records no graph)
  const torch::Device device = params_.empty() ? torch::Device(torch::kCPU) : params_[0].device();
  const torch::Tensor local =
      !loss.defined() ? torch::zeros({1}, torch::TensorOptions(torch::kFloat32).device(device))
      : loss.scalar_type() == torch::kFloat32 ? loss.view({1})
                                              : loss.view({1}).to(torch::kFloat32);
  if (coll_.size() == 1) {
    // A sum over one rank: the same values, without packing or a host round trip.
    for (auto& p : params_)
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    return local;
  }
  std::vector<torch::Tensor> parts;
  parts.reserve(params_.size() + 1);
  for (const auto& p : params_) {
    parts.push_back(p.grad().defined()
                        ? p.grad().reshape(-1)
                        : torch::zeros({p.numel()}, torch::TensorOptions().device(p.device())));
  }
  parts.push_back(local.to(device));
  torch::Tensor flat = torch::cat(parts).contiguous();
  torch::Tensor host = to_host(flat, &host_flat_);
  {
    RECORD_USER_SCOPE("partita::allreduce");  // a stage of train/step_profile.h
    coll_.allreduce_bucketed(host.data_ptr<float>(), static_cast<size_t>(host.numel()),
                             bucket_bytes_ / sizeof(float));
  }
  from_host(flat, host);
  int64_t offset = 0;
  for (auto& p : params_) {
    torch::Tensor g = flat.narrow(0, offset, p.numel()).view(p.sizes());
    if (p.grad().defined())
      p.mutable_grad().copy_(g);
    else
      p.mutable_grad() = g.clone();
    offset += p.numel();
  }
  return flat.narrow(0, offset, 1).clone();
}

// BatchNorm's running statistics: each rank saw only its own seeds. Floating-point
// buffers are averaged over ranks (so evaluation and checkpoints use the same values on
// every rank); integer ones (batch counters) take rank 0's value.
void GradientSync::average_buffers(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (torch::Tensor& b : module.buffers()) {
    if (!b.defined() || b.numel() == 0) continue;
    torch::Tensor buffer;
    if (b.is_floating_point()) {
      torch::Tensor flat =
          to_host(b.detach().to(torch::kFloat64).reshape(-1).contiguous(), &buffer);
      coll_.allreduce(flat.data_ptr<double>(), static_cast<size_t>(flat.numel()));
      b.copy_(flat.div_(coll_.size()).view(b.sizes()));
    } else {
      torch::Tensor flat = to_host(b.detach().to(torch::kInt64).reshape(-1).contiguous(), &buffer);
      coll_.broadcast(flat.data_ptr<int64_t>(), static_cast<size_t>(flat.numel()), 0);
      b.copy_(flat.view(b.sizes()));
    }
  }
}

}  // namespace partita::train
