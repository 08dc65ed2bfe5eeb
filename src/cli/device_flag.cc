#include "device_flag.h"

#include "launch_layout.h"
#include "partita/core/parameter_error.h"
#include "partita/train/device.h"

namespace partita::cli {

CLI::Option* add_device_flag(CLI::App& app, std::string* text, const std::string& help) {
  CLI::Option* option = app.add_option("--device", *text, help);
  CLI::Validator device(
      [](std::string& value) {
        try {
          train::parse_device(value);
          return std::string();
        } catch (const ParameterError& e) {
          return e.detail();
        }
      },
      "");
  // A flag given twice keeps its last value (make_command_line): only that one is checked.
  device.application_index(0);
  option->check(device);
  option->type_name("TEXT");
  option->capture_default_str();
  return option;
}

train::DeviceSpec rank_device(const std::string& text, const runtime::RankContext& rank) {
  train::DeviceSpec device = train::parse_device(text);
  train::check_device(device);
  if (!device.is_cpu() && device.index < 0)
    device.index =
        gpu_for_local_rank(rank.local_rank(), rank.local_size(), train::cuda_device_count());
  return device;
}

}  // namespace partita::cli
