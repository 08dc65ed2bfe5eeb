// Gradient synchronization: see partita/train/gradient_sync.h.
#include "partita/train/gradient_sync.h"

#include <utility>

namespace partita::train {

GradientSync::GradientSync(Collectives& coll, std::vector<torch::Tensor> params,
                           size_t bucket_bytes)
    : coll_(coll), params_(std::move(params)), bucket_bytes_(bucket_bytes) {}

// Rank != 0 contributes zeros to an allreduce sum, so every rank ends with rank 0's values.
void GradientSync::broadcast_initial_weights() {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (const auto& p : params_) parts.push_back(p.detach().reshape(-1));
  torch::Tensor flat = torch::cat(parts).contiguous();
  if (coll_.rank() != 0) flat.zero_();
  coll_.allreduce(flat.data_ptr<float>(), static_cast<size_t>(flat.numel()));
  int64_t offset = 0;
  for (auto& p : params_) {
    p.copy_(flat.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
}

double GradientSync::sum_gradients(double loss) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  parts.reserve(params_.size() + 1);
  for (const auto& p : params_)
    parts.push_back(p.grad().defined() ? p.grad().reshape(-1) : torch::zeros({p.numel()}));
  parts.push_back(torch::full({1}, loss, torch::kFloat32));
  torch::Tensor flat = torch::cat(parts).contiguous();
  {
    RECORD_USER_SCOPE("partita::allreduce");  // a stage of train/step_profile.h
    coll_.allreduce_bucketed(flat.data_ptr<float>(), static_cast<size_t>(flat.numel()),
                             bucket_bytes_ / sizeof(float));
  }
  int64_t offset = 0;
  for (auto& p : params_) {
    torch::Tensor g = flat.narrow(0, offset, p.numel()).view(p.sizes());
    if (p.grad().defined())
      p.mutable_grad().copy_(g);
    else
      p.mutable_grad() = g.clone();
    offset += p.numel();
  }
  return flat[offset].item<double>();
}

// BatchNorm's running statistics: each rank saw only its own seeds. Floating-point
// buffers are averaged over ranks (so evaluation and checkpoints use the same values on
// every rank); integer ones (batch counters) take rank 0's value.
void GradientSync::average_buffers(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (torch::Tensor& b : module.buffers()) {
    if (!b.defined() || b.numel() == 0) continue;
    if (b.is_floating_point()) {
      torch::Tensor flat = b.detach().to(torch::kFloat64).reshape(-1).contiguous();
      coll_.allreduce(flat.data_ptr<double>(), static_cast<size_t>(flat.numel()));
      b.copy_(flat.div_(coll_.size()).view(b.sizes()));
    } else {
      torch::Tensor flat = b.detach().to(torch::kInt64).reshape(-1).contiguous();
      coll_.broadcast(flat.data_ptr<int64_t>(), static_cast<size_t>(flat.numel()), 0);
      b.copy_(flat.view(b.sizes()));
    }
  }
}

}  // namespace partita::train
