#include "launch_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace partita::cli {

int rule_ranks_per_host(int cores, int sockets) {
  return std::clamp(sockets, 1, std::max(cores, 1));  // a socket without a core runs none
}

int rule_sampler_threads(int cores_per_rank) { return std::clamp(cores_per_rank / 8, 1, 4); }

int rule_torch_threads(int cores_per_rank, int sampler_threads) {
  return std::max(1, cores_per_rank > 4 ? cores_per_rank - sampler_threads : cores_per_rank);
}

Layout choose_layout(const LayoutRequest& request) {
  Layout layout;
  const int hosts = std::max(request.hosts, 1);
  layout.workload = request.workload;
  layout.cores = std::max(request.cores, 0);
  layout.sockets = std::max(request.sockets, 1);
  layout.rule_ranks_per_host =
      layout.cores > 0 ? rule_ranks_per_host(layout.cores, layout.sockets) : 1;
  if (request.ranks_per_host) {
    layout.ranks_per_host = std::max(*request.ranks_per_host, 1);
    layout.ranks_from = "procs-per-host";
  } else if (request.parts > 1) {
    layout.ranks_per_host = std::max(request.parts / hosts, 1);
    layout.ranks_from = "parts";
  } else if (request.parts == 1 && layout.cores > 0) {
    layout.ranks_per_host = layout.rule_ranks_per_host;
    layout.ranks_from = "rule";
  } else {
    layout.ranks_per_host = 1;
    layout.ranks_from = "default";
  }
  layout.replicated = request.parts == 1 && layout.ranks_per_host * hosts > 1;
  // Each workload's own automatic values for a rank bound to cores_per_rank cores (train and
  // sample-bench: resolve_sampler_threads and rule_torch_threads; infer, partition, generate:
  // the rank's cores), unless given.
  int cores_per_rank = 0;
  if (layout.cores > 0) {
    cores_per_rank = std::max(layout.cores / layout.ranks_per_host, 1);
    layout.cores_per_rank = cores_per_rank;
  }
  const int sampler =
      request.threads.value_or(cores_per_rank > 0 ? rule_sampler_threads(cores_per_rank) : 0);
  const int torch = request.torch_threads.value_or(
      cores_per_rank > 0 && sampler > 0 ? rule_torch_threads(cores_per_rank, sampler) : 0);
  switch (layout.workload) {
    case Workload::kTrain:
    case Workload::kProgram:
      layout.sampler_threads = sampler;
      layout.torch_threads = torch;
      break;
    case Workload::kInfer:
      layout.torch_threads = request.torch_threads.value_or(cores_per_rank);
      break;
    case Workload::kSampleBench:
      layout.sampler_threads = sampler;
      break;
    case Workload::kWorkers:
      layout.worker_threads = request.threads.value_or(cores_per_rank);
      break;
  }
  return layout;
}

std::vector<std::string> thread_flag_names(Workload workload) {
  switch (workload) {
    case Workload::kTrain:
      return {"--torch-threads", "--threads"};
    case Workload::kInfer:
      return {"--torch-threads"};
    case Workload::kSampleBench:
    case Workload::kWorkers:
      return {"--threads"};
    case Workload::kProgram:
      break;
  }
  return {};
}

std::vector<std::pair<std::string, int>> layout_thread_flags(const Layout& layout) {
  std::vector<std::pair<std::string, int>> flags;
  for (const std::string& flag : thread_flag_names(layout.workload)) {
    const int value = flag == "--torch-threads"               ? layout.torch_threads
                      : layout.workload == Workload::kWorkers ? layout.worker_threads
                                                              : layout.sampler_threads;
    if (value > 0) flags.emplace_back(flag, value);
  }
  return flags;
}

namespace {

std::string count(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "2 torch threads", "1 sampler thread", "automatic torch threads"; `what` may be empty.
std::string threads(int n, const std::string& what) {
  const std::string kind = what.empty() ? "" : what + " ";
  return n > 0 ? fmt::format("{} {}thread{}", n, kind, n == 1 ? "" : "s")
               : fmt::format("automatic {}threads", kind);
}

}  // namespace

std::string describe_layout(const Layout& layout, int hosts) {
  std::string each;
  switch (layout.workload) {
    case Workload::kTrain:
    case Workload::kProgram:
      each = threads(layout.torch_threads, "torch") + " + " +
             threads(layout.sampler_threads, "sampler");
      break;
    case Workload::kInfer:
      each = threads(layout.torch_threads, "torch");
      break;
    case Workload::kSampleBench:
      each = threads(layout.sampler_threads, "sampler");
      break;
    case Workload::kWorkers:
      each = threads(layout.worker_threads, "");
      break;
  }
  std::string line = fmt::format("launch: layout: {} per host x {}",
                                 count(layout.ranks_per_host, "rank", "ranks"), each);
  line += layout.cores > 0
              ? fmt::format(" ({}, {}; ranks from {})", count(layout.cores, "core", "cores"),
                            count(layout.sockets, "socket", "sockets"), layout.ranks_from)
              : fmt::format(" (cores unknown; ranks from {})", layout.ranks_from);
  if (hosts > 1) line += fmt::format(", on each of {} hosts", hosts);
  return line;
}

std::vector<int> visible_gpus(const std::optional<std::string>& cuda_visible_devices,
                              int device_count) {
  std::vector<int> gpus;
  if (!cuda_visible_devices) {
    for (int i = 0; i < device_count; ++i) gpus.push_back(i);
    return gpus;
  }
  // CUDA renumbers the listed devices 0..n-1 in list order and stops at the first invalid
  // entry; an ordinal beyond the devices found is such an entry.
  std::stringstream list(*cuda_visible_devices);
  for (std::string entry; std::getline(list, entry, ',');) {
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (entry.empty()) break;
    const bool ordinal = entry.find_first_not_of("0123456789") == std::string::npos;
    if (ordinal && std::stoll(entry.substr(0, 9)) >= device_count) break;
    if (!ordinal && entry.rfind("GPU-", 0) != 0 && entry.rfind("MIG-", 0) != 0) break;
    gpus.push_back(static_cast<int>(gpus.size()));
  }
  return gpus;
}

int gpu_for_local_rank(int local_rank, int local_ranks, int gpus) {
  if (gpus < 1 || local_ranks < 1) return -1;
  // Contiguous blocks: rank r of n goes to GPU r * gpus / n (n <= gpus: one GPU each).
  return static_cast<int>(static_cast<long long>(local_rank) * gpus / local_ranks);
}

}  // namespace partita::cli
