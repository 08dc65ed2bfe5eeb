// Progress bar and metrics file: see progress.h.
#include "progress.h"

#include <fmt/format.h>
#include <torch/version.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "partita/core/error.h"
#include "partita/core/version.h"

namespace partita::cli {

using train::LinkMetrics;
namespace {

constexpr int kBarWidth = 24;
constexpr double kRedrawInterval = 0.1;

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02d}:{:02d}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02d}", s / 60, s % 60);
}

nlohmann::json epoch_json(const EpochRecord& r, const std::string& validation_key) {
  nlohmann::json j;
  j["type"] = "epoch";
  j["epoch"] = r.epoch;
  j["steps"] = r.steps;
  j["seeds"] = r.seeds;
  j["loss"] = r.loss;
  j["train_acc"] = r.train_acc;
  j[validation_key] = r.validated ? nlohmann::json(r.val_acc) : nlohmann::json(nullptr);
  j["epoch_s"] = r.epoch_s;
  j["sample_s"] = r.sample_s;
  j["fetch_s"] = r.fetch_s;
  j["compute_s"] = r.compute_s;
  j["matmul_gflop"] = r.matmul_gflop;
  j["allreduce_s"] = r.allreduce_s;
  j["wait_s"] = r.wait_s;
  j["eval_s"] = r.eval_s;
  j["checkpoint_s"] = r.checkpoint_s;
  j["request_bytes"] = r.request_bytes;
  j["collective_bytes"] = r.collective_bytes;
  j["remote_rows"] = r.remote_rows;
  j["cache_hits"] = r.cache_hits;
  const int64_t remote = r.remote_rows + r.cache_hits;
  j["cache_hit_rate"] =
      remote > 0 ? static_cast<double>(r.cache_hits) / static_cast<double>(remote) : 0.0;
  j["edge_cache_hits"] = r.edge_cache_hits;
  j["remote_bytes"] = r.remote_bytes;
  j["gpu_cache_hits"] = r.gpu_cache_hits;
  j["gpu_cache_remote_hits"] = r.gpu_cache_remote_hits;
  j["gpu_cache_hit_rate"] = r.gpu_cache_lookups > 0 ? static_cast<double>(r.gpu_cache_hits) /
                                                          static_cast<double>(r.gpu_cache_lookups)
                                                    : 0.0;
  j["seeds_per_s"] = r.epoch_s > 0 ? static_cast<double>(r.seeds) / r.epoch_s : 0.0;
  j["rss_bytes"] = r.rss_bytes;
  j["os_threads"] = r.threads;
  j["open_fds"] = r.open_fds;
  return j;
}

}  // namespace

ProgressBar::ProgressBar(ProgressMode mode, int64_t epochs, double line_every_s)
    : mode_(mode), epochs_(epochs), line_every_s_(line_every_s) {}

void ProgressBar::update(const StepRecord& s) {
  if (mode_ == ProgressMode::kOff) return;
  const bool last = s.step == s.steps;
  if (mode_ == ProgressMode::kLines) {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_line_).count() < line_every_s_) return;
    last_line_ = now;
  } else {
    if (!last && last_draw_s_ >= 0 && s.elapsed_s - last_draw_s_ < kRedrawInterval &&
        s.elapsed_s >= last_draw_s_)
      return;
    last_draw_s_ = s.elapsed_s;
  }
  const double rate = s.elapsed_s > 0 ? static_cast<double>(s.seeds_done) / s.elapsed_s : 0.0;
  const double eta = s.step > 0 ? s.elapsed_s * static_cast<double>(s.steps - s.step) / s.step : 0;
  std::string line;
  if (mode_ == ProgressMode::kLines) {
    line = fmt::format("progress: epoch {}/{} step {}/{} loss {:.4f} {:.0f} seeds/s ETA {}\n",
                       s.epoch, epochs_, s.step, s.steps, s.loss, rate, format_duration(eta));
  } else {
    const int filled = s.steps > 0 ? static_cast<int>(kBarWidth * s.step / s.steps) : kBarWidth;
    line = fmt::format("\r\033[Kepoch {}/{} [{}{}] {}/{} loss {:.4f} {:.0f} seeds/s ETA {}",
                       s.epoch, epochs_, std::string(static_cast<size_t>(filled), '#'),
                       std::string(static_cast<size_t>(kBarWidth - filled), '.'), s.step, s.steps,
                       s.loss, rate, format_duration(eta));
    drawn_ = true;
  }
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

void ProgressBar::clear() {
  if (mode_ != ProgressMode::kBar || !drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
  last_draw_s_ = -1;
}

MetricsFile::MetricsFile(const std::string& path, bool append, std::string validation_key)
    : path_(path), validation_key_(std::move(validation_key)) {
  file_ = std::fopen(path.c_str(), append ? "a" : "w");
  PARTITA_CHECK(file_ != nullptr, IoError, "--metrics-out {}: cannot open: {}", path,
                std::strerror(errno));
}

void check_metrics_out(const std::string& path, bool resume, bool force) {
  std::error_code ec;
  PARTITA_CHECK(resume || force || !std::filesystem::exists(path, ec), UsageError,
                "--metrics-out {}: exists; pass --force to replace it, or --resume to append "
                "to it (or choose another file)",
                path);
}

void MetricsFile::write_run(const RunInfo& run) {
  nlohmann::json j;
  j["type"] = "run";
  j["partita"] = kVersion;
  j["torch"] = TORCH_VERSION;
  char started[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &utc);
  j["started"] = started;
  j["resume"] = run.resume;
  j["ranks"] = run.ranks;
  j["servers"] = run.servers;
  j["given"] = run.given;
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& [name, value] : run.settings) settings[name] = value;
  j["settings"] = settings;
  write_line(j.dump());
}

MetricsFile::~MetricsFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void MetricsFile::write_line(const std::string& line) {
  const bool ok = std::fputs(line.c_str(), file_) >= 0 && std::fputc('\n', file_) != EOF &&
                  std::fflush(file_) == 0;
  PARTITA_CHECK(ok, IoError, "--metrics-out {}: write failed: {}", path_, std::strerror(errno));
}

void MetricsFile::write_epoch(const EpochRecord& rec) {
  write_line(epoch_json(rec, validation_key_).dump());
}

void MetricsFile::write_final(const TrainResult& result, int ranks, int servers) {
  nlohmann::json j;
  j["type"] = "final";
  if (const std::optional<LinkMetrics>& m = result.test_link) {
    j["task"] = "link";
    j["test_auc"] = m->auc;
    j["test_ap"] = m->ap;
    j["test_mrr"] = m->mrr;
    j["test_hits@" + std::to_string(m->hits_k)] = m->hits;
    j["test_pairs"] = m->positives + m->negatives;
  } else {
    j["task"] = "node";
    j["test_acc"] = result.test_acc;
  }
  j["eval"] = result.eval;
  j["sample_on"] = result.sample_on;
  j["epochs"] = result.resumed_epochs + static_cast<int64_t>(result.epochs.size());
  j["resumed_epochs"] = result.resumed_epochs;
  j["ranks"] = ranks;
  j["servers"] = servers;
  j["train_s"] = result.train_s;
  int64_t steps = 0, seeds = 0;
  double sums[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (const EpochRecord& r : result.epochs) {
    steps += r.steps;
    seeds += r.seeds;
    const double values[8] = {r.epoch_s,     r.sample_s, r.fetch_s, r.compute_s,
                              r.allreduce_s, r.wait_s,   r.eval_s,  r.checkpoint_s};
    for (int i = 0; i < 8; ++i) sums[i] += values[i];
  }
  j["steps"] = steps;
  j["seeds"] = seeds;
  const char* names[8] = {"epoch_s",     "sample_s", "fetch_s", "compute_s",
                          "allreduce_s", "wait_s",   "eval_s",  "checkpoint_s"};
  for (int i = 0; i < 8; ++i) j[names[i]] = sums[i];
  j["cache_rows"] = result.cache.rows;
  j["cache_bytes"] = result.cache.bytes;
  j["cache_presample_s"] = result.cache.presample_s;
  j["cache_expected_hit_rate"] = result.cache.expected_hit_rate;
  j["edge_cache_rows"] = result.cache.edge_rows;
  j["edge_cache_bytes"] = result.cache.edge_bytes;
  j["edge_cache_expected_hit_rate"] = result.cache.edge_expected_hit_rate;
  const train::DeviceCacheReport& d = result.device_cache;
  j["gpu_cache_rows"] = d.rows;
  j["gpu_cache_remote_rows"] = d.remote_rows;
  j["gpu_cache_bytes"] = d.bytes;
  j["gpu_cache_presample_s"] = d.presample_s;
  j["gpu_cache_expected_hit_rate"] = d.expected_hit_rate;
  write_line(j.dump());
}

}  // namespace partita::cli
