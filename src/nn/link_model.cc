// LinkModel: see partita/nn/link_model.h.
#include "partita/nn/link_model.h"

#include "partita/core/error.h"

namespace partita::nn {

LinkModel::LinkModel(const GnnOptions& encoder, LinkDecoder decoder)
    : encoder_(std::make_shared<GnnModel>(encoder)), decoder_(decoder) {
  register_module("encoder", encoder_);
  if (decoder_ == LinkDecoder::kMlp) {
    const int64_t d = encoder.out_dim;
    mlp_ =
        torch::nn::Sequential(torch::nn::Linear(d, d), torch::nn::ReLU(), torch::nn::Linear(d, 1));
    register_module("decoder", mlp_);
  }
}

torch::Tensor LinkModel::score(const torch::Tensor& h, const torch::Tensor& src,
                               const torch::Tensor& dst) {
  PARTITA_CHECK(h.dim() == 2 && src.dim() == 1 && src.sizes() == dst.sizes(), Error,
                "LinkModel::score: h {}-d, {} sources and {} destinations", h.dim(), src.numel(),
                dst.numel());
  const torch::Tensor x = h.to(torch::kFloat32);
  const torch::Tensor product = x.index_select(0, src) * x.index_select(0, dst);
  if (decoder_ == LinkDecoder::kDot) return product.sum(1);
  return mlp_->forward(product).squeeze(1);
}

}  // namespace partita::nn
