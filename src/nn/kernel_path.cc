// Which implementation nn's ops run: see kernel_path.h.
#include "partita/nn/kernel_path.h"

#include <c10/core/Device.h>

namespace partita::nn {
namespace {

// KernelPathScope(kGeneric) instances alive on this thread.
thread_local int t_generic_scopes = 0;

}  // namespace

bool uses_generic_ops(const c10::Device& device) {
  return !device.is_cpu() || t_generic_scopes > 0;
}

KernelPathScope::KernelPathScope(KernelPath path) : generic_(path == KernelPath::kGeneric) {
  if (generic_) ++t_generic_scopes;
}

KernelPathScope::~KernelPathScope() {
  if (generic_) --t_generic_scopes;
}

}  // namespace partita::nn
