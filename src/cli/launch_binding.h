#pragma once
// `partita launch`: how ranks are pinned to CPUs (--bind), pure: the launcher's mapping and
// binding flags for a number of ranks per host. Planning (launch_plan.h) asks it.
#include <optional>
#include <string>
#include <vector>

namespace partita::cli {

// How ranks are pinned to CPUs (--bind). kCore: each rank gets cores/ranks-per-host cores
// of its own; kSocket: a socket each (ranks on a socket share it); kNone: no pinning.
enum class Bind { kCore, kSocket, kNone };

// "core", "socket" or "none"; throws UsageError naming --bind otherwise.
Bind parse_bind(const std::string& word);

struct BindingRequest {
  // --bind; unset: kCore when every rank of a host can have a core of its own, else kNone;
  // inside Slurm (srun) the allocation's, and on this host alone under a narrowed affinity
  // (affinity_restricted) kNone.
  std::optional<Bind> bind;
  int cores = 0;    // cores per host; 0: unknown
  int sockets = 1;  // sockets per host (ranks are spread evenly over them)
  int ranks_per_host = 1;
  bool srun = false;                 // the launcher is srun (else mpirun)
  bool local = false;                // the ranks run on this host alone
  bool affinity_restricted = false;  // LaunchFacts::affinity_restricted
};

// mpirun's mapping and binding flags (--map-by, --bind-to), or srun's --cpu-bind. Empty when
// neither --bind nor the host's cores are known (the launcher's defaults then). Throws
// UsageError naming --bind when `--bind core` leaves a rank without a core.
std::vector<std::string> binding_flags(const BindingRequest& request);

}  // namespace partita::cli
