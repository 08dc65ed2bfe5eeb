#pragma once
// Which implementation the ops of nn/ (message_passing.h, dropout.h, block_tensors.h) run.
// Tensors on a GPU (any device but the CPU) always take the device-generic ops: plain torch
// ops with no per-edge feature rows and no host round trip (src/nn/generic_ops.h). CPU
// tensors take the fused CPU kernels (kernels.h), unless the calling thread holds a
// KernelPathScope(kGeneric): then they take the device-generic ops too, so that a CPU runs,
// tests and counts (`train --profile`'s ops_per_step) exactly the ops a GPU would.
//
// The choice is per thread: a scope affects only the thread that made it (CPU autograd runs
// backward on the calling thread, so a step's backward follows its forward). Scopes nest.
// No torch header here (train_options.h includes this one): c10::Device is declared below.
#include "partita/core/name_table.h"

namespace c10 {
struct Device;
}  // namespace c10

namespace partita::nn {

enum class KernelPath {
  kAuto,     // fused kernels on the CPU, device-generic ops elsewhere
  kGeneric,  // device-generic ops everywhere
};

// The names of the paths (--kernels): auto, generic.
inline const NameTable<KernelPath>& kernel_path_names() {
  static const NameTable<KernelPath> names{{"auto", KernelPath::kAuto},
                                           {"generic", KernelPath::kGeneric}};
  return names;
}

// Whether nn's ops take the device-generic path for tensors on `device` on this thread.
bool uses_generic_ops(const c10::Device& device);

// While alive, this thread's nn ops follow `path` on CPU tensors (kAuto changes nothing).
// Must end on the thread that made it.
class KernelPathScope {
 public:
  explicit KernelPathScope(KernelPath path);
  ~KernelPathScope();
  KernelPathScope(const KernelPathScope&) = delete;
  KernelPathScope& operator=(const KernelPathScope&) = delete;

 private:
  bool generic_;
};

}  // namespace partita::nn
