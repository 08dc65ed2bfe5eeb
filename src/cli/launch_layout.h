#pragma once
// `partita launch`'s layout rule, pure: from a host's usable cores and sockets, the part
// count of the partition and the user's overrides, how many ranks each host runs and how
// many torch (kernel) and sampler threads each rank gets; and which GPU a local rank uses.
// No I/O: cmd_launch.cc gathers the facts. docs/launch.md gives the measurements behind it.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace partita::cli {

// What the ranks run, for the thread flags launch passes: each command gets the values it
// would pick by itself on a rank bound to its share of the cores, so that the printed layout
// is the one that runs.
enum class Workload {
  kTrain,        // train: --torch-threads and --threads (sampler)
  kInfer,        // infer: --torch-threads (it has no sampler threads)
  kSampleBench,  // sample-bench: --threads (sampler; no model)
  kWorkers,      // partition, generate: --threads (worker threads: all the rank's cores)
  kProgram,      // another program (a Python script): OMP_NUM_THREADS = train's torch threads
};

struct LayoutRequest {
  int cores = 0;    // usable physical cores of each host; 0: unknown (no layout then)
  int sockets = 1;  // sockets (or NUMA nodes, the larger) among those cores; >= 1
  int hosts = 1;
  // Parts of the partition directory: 0 none or unknown (1 rank per host: the program may
  // not handle more), 1 replicated mode (any number of ranks, each holding the whole
  // graph: the rule picks them), P > 1: one rank per part, P / hosts per host.
  int parts = 0;
  Workload workload = Workload::kTrain;
  std::optional<int> ranks_per_host;  // --procs-per-host
  std::optional<int> torch_threads;   // --torch-threads
  // --threads: the sampler threads of train and sample-bench, the worker threads of
  // partition and generate.
  std::optional<int> threads;
};

struct Layout {
  int ranks_per_host = 1;
  int cores = 0;  // cores per host the layout was made for; 0: unknown
  int sockets = 1;
  Workload workload = Workload::kTrain;
  int cores_per_rank = 0;  // 0 when the cores are unknown
  // Threads per rank; 0: unknown (the rank decides from its affinity) or not the workload's.
  int torch_threads = 0;        // train, infer, a program (OMP_NUM_THREADS)
  int sampler_threads = 0;      // train, sample-bench
  int worker_threads = 0;       // partition, generate
  int rule_ranks_per_host = 1;  // what the rule alone picks for these cores and sockets
  bool replicated = false;      // a 1-part directory run by several ranks
  // Where the rank count came from: "rule", "parts" (one rank per part), "procs-per-host",
  // or "default" (no partition: 1 rank); plan_launch may say "rule, capped by the
  // hostfile's slots".
  std::string ranks_from;
};

// The rule: one rank per socket (on the usual one-socket host, one rank per host), with
// all of its socket's cores for its threads. Measured (docs/launch.md, "The numbers behind
// it"): on a 16-core host one rank of 16 threads had the fastest epoch and 16 ranks of one
// thread the slowest; on 2 cores one rank of 2 threads beat 2 ranks of 1 on a quiet
// machine. One per socket rather than one per host keeps a rank's threads and memory on one
// socket (not measured: no multi-socket host has been). cores >= 1, sockets >= 1.
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

// The thread flags a workload's command takes, in the order launch appends them: train
// {--torch-threads, --threads}, infer {--torch-threads}, sample-bench {--threads},
// partition and generate {--threads} (the worker threads); a program none (it gets
// OMP_NUM_THREADS).
std::vector<std::string> thread_flag_names(Workload workload);

// Those flags with the layout's values; flags whose value is unknown (0) are left out: the
// rank decides.
std::vector<std::pair<std::string, int>> layout_thread_flags(const Layout& layout);

// The whole layout. Throws nothing: invalid combinations are plan_launch's to reject.
Layout choose_layout(const LayoutRequest& request);

// The one line launch prints, e.g. "launch: layout: 1 rank per host x 2 torch threads + 1
// sampler thread (2 cores, 1 socket; ranks from rule)"; the threads named are the
// workload's ("x 2 threads" for partition and generate).
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
