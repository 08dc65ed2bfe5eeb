// See resume_settings.h.
#include "resume_settings.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>

#include "partita/core/error.h"
#include "partita/runtime/failure.h"
#include "partita/train/checkpoint.h"

namespace partita::cli {

RecordedSettings share_recorded_settings(Collectives& job, const std::string& dir, int root) {
  std::string text;  // JSON: {"source": path, "settings": [[name, value], ...]}, or empty
  runtime::agree_on_setup(job, [&] {
    if (job.rank() != root) return;
    const std::optional<std::string> path = train::latest_checkpoint(dir);
    if (!path) return;
    const train::CheckpointMeta meta =
        train::read_checkpoint_meta(train::read_whole_file(*path), *path);
    text = nlohmann::json{{"source", *path}, {"settings", meta.settings}}.dump();
  });
  int64_t size = static_cast<int64_t>(text.size());
  job.broadcast(&size, 1, root);
  text.resize(static_cast<size_t>(size));
  if (size > 0) job.broadcast(text.data(), text.size(), root);
  RecordedSettings recorded;
  if (text.empty()) return recorded;
  const nlohmann::json j = nlohmann::json::parse(text);
  recorded.found = true;
  recorded.source = j.at("source").get<std::string>();
  recorded.settings = j.at("settings").get<Settings>();
  return recorded;
}

void set_flag_values(CLI::App& app, const Settings& values, const std::string& source) {
  for (const auto& [name, value] : values) {
    CLI::Option* option = app.get_option_no_throw("--" + name);
    if (option == nullptr) continue;
    try {
      option->clear();
      option->add_result(value);
      option->run_callback();
    } catch (const CLI::Error& e) {
      throw UsageError(
          fmt::format("--{}: {} (the value of {}) is refused: {}", name, value, source, e.what()));
    }
  }
}

}  // namespace partita::cli
