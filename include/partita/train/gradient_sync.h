#pragma once
// Data-parallel synchronization of one model's parameters over the trainers' collectives
// (trainer.h, DESIGN 7). Every call is collective: every rank calls the same methods in the
// same order, with models of the same shape. The parameter list is fixed at construction.
//
// - broadcast_initial_weights: rank != 0 zeroes its parameters, one allreduce-sum then
//   leaves rank 0's values everywhere (in float32, exactly).
// - sum_gradients: every gradient (zeros where undefined) and the step's loss go into one
//   flat float32 buffer, summed with bucketed allreduces (bucket_bytes per bucket, all in
//   flight at once) and copied back into the gradients; returns the summed loss.
// - average_buffers: a module's floating-point buffers (BatchNorm's running statistics)
//   averaged over ranks in float64, integer buffers (counters) set to rank 0's.
#include <torch/torch.h>

#include <cstddef>
#include <vector>

#include "partita/comm/collectives.h"

namespace partita::train {

class GradientSync {
 public:
  // `params`: the model's parameters (shared tensors). bucket_bytes >= sizeof(float).
  GradientSync(Collectives& coll, std::vector<torch::Tensor> params, size_t bucket_bytes);

  void broadcast_initial_weights();
  double sum_gradients(double loss);
  void average_buffers(torch::nn::Module& module);

  const std::vector<torch::Tensor>& params() const { return params_; }

 private:
  Collectives& coll_;
  std::vector<torch::Tensor> params_;
  size_t bucket_bytes_;
};

}  // namespace partita::train
