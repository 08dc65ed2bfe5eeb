// The device of a run: parsing (train_options.h) and checks against torch (device.h).
#include "partita/train/device.h"

#include <ATen/Context.h>
#include <c10/core/DeviceGuard.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"

namespace partita::train {

DeviceSpec parse_device(std::string_view text) {
  DeviceSpec device;
  if (text == "cpu") return device;
  const std::string_view cuda = "cuda";
  if (text.substr(0, cuda.size()) == cuda) {
    device.kind = DeviceSpec::Kind::kCuda;
    std::string_view rest = text.substr(cuda.size());
    if (rest.empty()) return device;
    if (rest[0] == ':' && rest.size() >= 2 && rest.size() <= 5) {
      int index = 0;
      bool digits = true;
      for (char c : rest.substr(1)) {
        digits = digits && c >= '0' && c <= '9';
        index = index * 10 + (c - '0');
      }
      if (digits) {
        device.index = index;
        return device;
      }
    }
  }
  throw ParameterError("device",
                       fmt::format("'{}' is not a device: use cpu, cuda (a GPU per rank) or "
                                   "cuda:N (GPU N)",
                                   text));
}

std::string device_text(const DeviceSpec& device) {
  if (device.is_cpu()) return "cpu";
  return device.index < 0 ? "cuda" : fmt::format("cuda:{}", device.index);
}

int cuda_device_count() {
  if (!at::hasCUDA()) return 0;
  return static_cast<int>(torch::cuda::device_count());
}

void check_device(const DeviceSpec& device) {
  if (device.is_cpu()) return;
  const std::string text = device_text(device);
  PARTITA_CHECK_PARAM(at::hasCUDA(), "device",
                      "{}: this torch was built without CUDA (a CPU-only libtorch); build "
                      "against a CUDA torch, or use cpu",
                      text);
  const int gpus = cuda_device_count();
  if (gpus == 0) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    throw ParameterError(
        "device",
        fmt::format("{}: torch has CUDA but sees no GPU{}; use cpu", text,
                    visible != nullptr ? fmt::format(" (CUDA_VISIBLE_DEVICES='{}')", visible)
                                       : std::string(" (no driver, or no device)")));
  }
  PARTITA_CHECK_PARAM(device.index < gpus, "device",
                      "{}: out of range, this process sees {} GPU{} (cuda:0{})", text, gpus,
                      gpus == 1 ? "" : "s", gpus == 1 ? "" : fmt::format(" to cuda:{}", gpus - 1));
}

torch::Device torch_device(const DeviceSpec& device) {
  if (device.is_cpu()) return torch::kCPU;
  return {torch::kCUDA, static_cast<c10::DeviceIndex>(device.index < 0 ? 0 : device.index)};
}

namespace {

// MemAvailable of /proc/meminfo, in bytes.
int64_t available_host_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  int64_t kib = 0;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  throw Error("cannot read MemAvailable from /proc/meminfo");
}

// The current GPU's free memory through the CUDA runtime or driver in this process, or -1
// when neither is loaded.
int64_t current_gpu_free_bytes() {
  // cudaError_t cudaMemGetInfo(size_t* free, size_t* total); CUresult cuMemGetInfo_v2(...).
  using MemGetInfo = int (*)(size_t*, size_t*);
  for (const char* name : {"cudaMemGetInfo", "cuMemGetInfo_v2"}) {
    const auto get = reinterpret_cast<MemGetInfo>(dlsym(RTLD_DEFAULT, name));
    if (get == nullptr) continue;
    size_t free = 0, total = 0;
    const int status = get(&free, &total);
    PARTITA_CHECK(status == 0, Error, "{} failed with status {}", name, status);
    return static_cast<int64_t>(free);
  }
  return -1;
}

}  // namespace

int64_t free_memory_bytes(const torch::Device& device) {
  if (device.is_cpu()) return available_host_bytes();
  const c10::DeviceGuard on(device);  // the runtime reports the current device's memory
  const int64_t free = current_gpu_free_bytes();
  PARTITA_CHECK(free >= 0, Error,
                "cannot read the free memory of {}: neither cudaMemGetInfo nor cuMemGetInfo_v2 is "
                "loaded in this process",
                device.str());
  return free;
}

}  // namespace partita::train
