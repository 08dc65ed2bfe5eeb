#pragma once
// `partita launch`'s layout rule, pure: from a host's usable cores and sockets, the part
// count of the partition and the user's overrides, how many ranks each host runs and how
// many torch (kernel) and sampler threads each rank gets; and which GPU a local rank uses.
// No I/O: cmd_launch.cc gathers the facts. docs/launch.md gives the measurements behind it.
#include <optional>
#include <string>
#include <vector>

namespace partita::cli {

// The largest rank count per host that was measured to be the best (issue 23: 16 ranks on a
// 16-core host, 4.8 s per epoch against 5.7 s for 8 and 8.4 s for 4). Beyond it, a host runs
// this many ranks with more cores each: an extrapolation until a larger host is measured.
inline constexpr int kMaxRuleRanksPerHost = 16;

struct LayoutRequest {
  int cores = 0;    // usable physical cores of each host; 0: unknown (no layout then)
  int sockets = 1;  // sockets (or NUMA nodes, the larger) among those cores; >= 1
  int hosts = 1;
  // Parts of the partition directory: 0 none or unknown (1 rank per host: the program may
  // not handle more), 1 replicated mode (any number of ranks, each holding the whole
  // graph: the rule picks them), P > 1: one rank per part, P / hosts per host.
  int parts = 0;
  std::optional<int> ranks_per_host;   // --procs-per-host
  std::optional<int> torch_threads;    // --torch-threads
  std::optional<int> sampler_threads;  // --threads
};

struct Layout {
  int ranks_per_host = 1;
  int cores = 0;  // cores per host the layout was made for; 0: unknown
  int sockets = 1;
  int cores_per_rank = 0;       // 0 when the cores are unknown
  int torch_threads = 0;        // 0: unknown, the rank decides from its affinity
  int sampler_threads = 0;      // 0: unknown, the rank decides
  int rule_ranks_per_host = 1;  // what the rule alone picks for these cores and sockets
  bool replicated = false;      // a 1-part directory run by several ranks
  // Where the rank count came from: "rule", "parts" (one rank per part), "procs-per-host",
  // or "default" (no partition: 1 rank); plan_launch may say "rule, capped by the
  // hostfile's slots".
  std::string ranks_from;
};

// The rule: one rank per core up to kMaxRuleRanksPerHost per host; more cores: that many
// ranks, sharing the cores evenly; rounded down to a multiple of the sockets so that no rank
// spans two (at least one rank per socket). cores >= 1, sockets >= 1.
int rule_ranks_per_host(int cores, int sockets);

// Sampler threads of a rank with `cores_per_rank` cores: one per 8 cores, 1 to 4 (train's
// automatic --threads).
int rule_sampler_threads(int cores_per_rank);

// Torch threads of a rank with `cores_per_rank` cores and `sampler_threads` sampler threads:
// its cores, less the sampler threads on more than 4 cores (train's automatic
// --torch-threads), at least 1. On a few cores the sampler threads' work (sampling and
// fetching, 10-35% of a step's time) overlaps the model's and the OS shares the cores;
// reserving a core for them would cost the model a third to a half of its cores. On more
// cores they get their own, so that none of torch's OpenMP threads is preempted (its
// barriers wait for the slowest thread).
int rule_torch_threads(int cores_per_rank, int sampler_threads);

// The whole layout. Throws nothing: invalid combinations are plan_launch's to reject.
Layout choose_layout(const LayoutRequest& request);

// The one line launch prints, e.g. "launch: layout: 2 ranks per host x 1 torch thread + 1
// sampler thread (2 cores, 1 socket; ranks: rule); replicated: each rank holds the 1-part
// directory".
std::string describe_layout(const Layout& layout, int hosts);

// GPUs a rank may use, from CUDA_VISIBLE_DEVICES ("0,2", "" none) given the devices found;
// unset (nullopt) means all of 0..device_count-1. Entries that are not device numbers
// (GPU-... UUIDs, MIG-...) are kept by their position: the result lists device ordinals as
// the process will see them, 0..n-1, so a UUID list of n entries gives 0..n-1.
std::vector<int> visible_gpus(const std::optional<std::string>& cuda_visible_devices,
                              int device_count);

// The GPU (an index into visible_gpus) of local rank `local_rank` of `local_ranks` on a host
// with `gpus` visible GPUs: ranks are dealt out in contiguous blocks (ranks 0..k-1 on GPU 0,
// ...), so that neighbouring ranks, which share a socket under core binding, share a GPU;
// -1 when there is no GPU. local_rank in [0, local_ranks).
int gpu_for_local_rank(int local_rank, int local_ranks, int gpus);

}  // namespace partita::cli
