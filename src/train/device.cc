// The device of a run: parsing (train_options.h) and checks against torch (device.h).
#include "partita/train/device.h"

#include <ATen/Context.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <string>

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

}  // namespace partita::train
