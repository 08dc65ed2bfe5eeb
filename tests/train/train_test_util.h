#pragma once
// Helpers shared by the trainer tests.
#include <torch/torch.h>

#include <vector>

#include "partita/nn/gnn_model.h"

namespace partita::testing {

// Every parameter of `model`, flattened in order (to compare weights across runs or ranks).
inline std::vector<float> flat_parameters(nn::GnnModel& model) {
  torch::NoGradGuard no_grad;
  std::vector<float> out;
  for (const auto& p : model.parameters()) {
    torch::Tensor t = p.detach().reshape(-1).contiguous();
    out.insert(out.end(), t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  }
  return out;
}

}  // namespace partita::testing
