#pragma once
// Data-parallel synchronization of one model's parameters over the trainers' collectives
// (trainer.h, DESIGN 7). Every call is collective: every rank calls the same methods in the
// same order, with models of the same shape. The parameter list is fixed at construction.
//
// - broadcast_initial_weights: rank != 0 zeroes its parameters, one allreduce-sum then
//   leaves rank 0's values everywhere (in float32, exactly).
// - sum_gradients: every gradient (zeros where undefined) and the step's loss go into one
//   flat float32 buffer, summed with bucketed allreduces (bucket_bytes per bucket, all in
//   flight at once) and copied back into the gradients; returns the summed loss as a
//   1-element tensor on the parameters' device, never read on the host here. With one rank
//   the sum is the identity: undefined gradients become zeros (as the sum would make them),
//   nothing is packed or copied, and the loss is returned as given.
// - average_buffers: a module's floating-point buffers (BatchNorm's running statistics)
//   averaged over ranks in float64, integer buffers (counters) set to rank 0's.
//
// Devices: MPI reads and writes host memory only (Open MPI here is not CUDA-aware). When
// the parameters live on another device, each flat buffer is copied (blocking) into a host
// buffer, pinned when CUDA is available (the gradients' one is kept between steps), reduced
// there and copied back: the step's one host round trip with several ranks (Open MPI here is
// not CUDA-aware). On the CPU the flat buffer itself is reduced, with no copy.
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
  // `loss`: the step's local loss (a scalar or 1-element float32 tensor on the parameters'
  // device; undefined: 0, a rank without seeds).
  torch::Tensor sum_gradients(const torch::Tensor& loss);
  void average_buffers(torch::nn::Module& module);

  const std::vector<torch::Tensor>& params() const { return params_; }

 private:
  // `flat` itself on the CPU; else its values in *buffer (host, reallocated when its size or
  // type differ), which is returned.
  static torch::Tensor to_host(const torch::Tensor& flat, torch::Tensor* buffer);
  // Copies `host` back into `flat` unless they are the same memory.
  static void from_host(torch::Tensor& flat, const torch::Tensor& host);

  Collectives& coll_;
  std::vector<torch::Tensor> params_;
  size_t bucket_bytes_;
  torch::Tensor host_flat_;  // the host copy of a device model's flat gradients
};

}  // namespace partita::train
