#pragma once
// Link prediction (issue 12): a node encoder (any GnnModel) and a decoder that scores a
// pair of encoded nodes. The encoder's output layer gives the node embeddings (width
// GnnOptions::out_dim, set to the hidden width for link tasks); there is no activation
// after it, as in GAE (Kipf & Welling 2016).
//
// Decoders, on the embeddings h_u, h_v of a pair (float32):
//   kDot  score = <h_u, h_v>                        (no parameters)
//   kMlp  score = w2 . relu(W1 (h_u * h_v) + b1) + b2, W1 [d, d] (element-wise product
//         first, so the score is symmetric in u and v, as DGL's and PyG's MLP predictors)
// Scores are logits: the probability of an edge is sigmoid(score).
//
// The parameters are the encoder's under "encoder." and the decoder's under "decoder.",
// so a checkpoint of a LinkModel holds both.
#include <torch/torch.h>

#include <memory>

#include "partita/core/name_table.h"
#include "partita/nn/gnn_model.h"

namespace partita::nn {

enum class LinkDecoder { kDot, kMlp };

// The names of the decoders (--decoder).
inline const NameTable<LinkDecoder>& link_decoder_names() {
  static const NameTable<LinkDecoder> names{{"dot", LinkDecoder::kDot}, {"mlp", LinkDecoder::kMlp}};
  return names;
}

class LinkModel : public torch::nn::Module {
 public:
  // Throws partita::Error as GnnModel does.
  LinkModel(const GnnOptions& encoder, LinkDecoder decoder);

  GnnModel& encoder() { return *encoder_; }
  std::shared_ptr<GnnModel> encoder_ptr() { return encoder_; }
  LinkDecoder decoder() const { return decoder_; }

  // Logits of the pairs (rows src[i], dst[i] of h): h [n, out_dim], src and dst int64 [P]
  // with values in [0, n). Returns float32 [P]. Throws partita::Error on a size mismatch.
  torch::Tensor score(const torch::Tensor& h, const torch::Tensor& src, const torch::Tensor& dst);

 private:
  std::shared_ptr<GnnModel> encoder_;
  LinkDecoder decoder_;
  torch::nn::Sequential mlp_{nullptr};  // kMlp only
};

}  // namespace partita::nn
