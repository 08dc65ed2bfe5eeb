// counter_dropout: see dropout.h. CPU tensors run kernels::dropout; others (and CPU ones
// under KernelPathScope(kGeneric)) the torch-op version of generic_ops.h.
#include "partita/nn/dropout.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "generic_ops.h"
#include "kernels.h"
#include "partita/core/error.h"
#include "partita/nn/kernel_path.h"
#include "tensor_types.h"

namespace partita::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

torch::Tensor apply_mask(const torch::Tensor& x, uint32_t threshold, float scale, uint64_t key) {
  const torch::Tensor xc = x.contiguous();
  torch::Tensor out = torch::empty_like(xc);
  kernels::dropout(xc.data_ptr(), out.data_ptr(), xc.numel(), threshold, scale, key,
                   kernel_dtype(xc, "dropout"));
  return out;
}

struct DropoutFn : torch::autograd::Function<DropoutFn> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, int64_t threshold,
                               double scale, int64_t key) {
    RECORD_USER_SCOPE("partita::dropout_forward");
    ctx->saved_data["threshold"] = threshold;
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["key"] = key;
    ctx->saved_data["dtype"] = static_cast<int64_t>(x.scalar_type());
    return apply_mask(x, static_cast<uint32_t>(threshold), static_cast<float>(scale),
                      static_cast<uint64_t>(key));
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    RECORD_USER_SCOPE("partita::dropout_backward");
    const auto type = static_cast<torch::ScalarType>(ctx->saved_data["dtype"].toInt());
    torch::Tensor g =
        apply_mask(grads[0].to(type), static_cast<uint32_t>(ctx->saved_data["threshold"].toInt()),
                   static_cast<float>(ctx->saved_data["scale"].toDouble()),
                   static_cast<uint64_t>(ctx->saved_data["key"].toInt()));
    return {g, {}, {}, {}};
  }
};

}  // namespace

torch::Tensor counter_dropout(const torch::Tensor& x, double p, uint64_t key) {
  PARTITA_CHECK(p >= 0 && p < 1, Error, "dropout: p must be in [0, 1), got {}", p);
  PARTITA_CHECK(x.scalar_type() == torch::kFloat32 || x.scalar_type() == torch::kBFloat16 ||
                    x.scalar_type() == torch::kFloat64,
                Error, "dropout: float32, bfloat16 or float64 tensors only, got {}",
                c10::toString(x.scalar_type()));
  PARTITA_CHECK(x.numel() < (int64_t{1} << 32), Error,
                "dropout: {} elements, more than the mask's 2^32", x.numel());
  if (p == 0) return x;
  if (uses_generic_ops(x.device())) return generic::dropout(x, p, key);
  const auto threshold = std::min<int64_t>(std::llround(std::ldexp(p, 32)), 0xffffffffLL);
  return DropoutFn::apply(x, threshold, 1.0 / (1.0 - p), static_cast<int64_t>(key));
}

}  // namespace partita::nn
