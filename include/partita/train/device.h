#pragma once
// The device of a run (train::DeviceSpec, train_options.h) against this process's torch:
// whether it can be used, and as a torch::Device. Front ends (the command line, Python) call
// check_device before anything starts, so that a device that is missing is one error line
// naming what is missing, not a crash inside torch. Thread-safe (reads torch's state only).
#include <torch/types.h>

#include "partita/train/train_options.h"

namespace partita::train {

// CUDA GPUs this process sees (torch::cuda::device_count(); 0 when torch has no CUDA).
int cuda_device_count();

// Throws ParameterError(device) when `device` cannot be used here, saying what is missing:
// this torch was built without CUDA; or it has CUDA but sees no GPU (CUDA_VISIBLE_DEVICES is
// quoted when set); or cuda:N with N at or past the GPUs seen. The CPU always passes.
void check_device(const DeviceSpec& device);

// `device` as torch's; a cuda spec without an index is GPU 0. Not checked: call
// check_device first.
torch::Device torch_device(const DeviceSpec& device);

// The free memory of `device` now, in bytes: a GPU's as its driver reports it (what torch's
// caching allocator holds counts as used), the CPU's available memory (MemAvailable). Throws
// Error when it cannot be read. For a GPU it calls the CUDA runtime's cudaMemGetInfo (or the
// driver's cuMemGetInfo) found in the process, where torch's CUDA library loaded it: Partita
// compiles no CUDA code.
int64_t free_memory_bytes(const torch::Device& device);

}  // namespace partita::train
