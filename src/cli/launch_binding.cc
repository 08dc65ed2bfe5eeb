#include "launch_binding.h"

#include <algorithm>

#include "partita/core/error.h"

namespace partita::cli {

Bind parse_bind(const std::string& word) {
  if (word == "core") return Bind::kCore;
  if (word == "socket") return Bind::kSocket;
  if (word == "none") return Bind::kNone;
  throw UsageError(fmt::format("--bind: '{}' is not core, socket or none", word));
}

std::vector<std::string> binding_flags(const BindingRequest& request) {
  const int cores = request.cores;
  const int sockets = std::max(request.sockets, 1);
  const int ppn = request.ranks_per_host;
  const bool srun = request.srun;
  std::optional<Bind> bind = request.bind;
  // Inside Slurm the allocation and its task/affinity plugin decide unless told otherwise.
  if (!bind && cores > 0 && !srun) bind = ppn <= cores ? Bind::kCore : Bind::kNone;
  // Under taskset, mpirun's binding would leave launch's CPUs: the ranks inherit them.
  if (!request.bind && request.local && !srun && request.affinity_restricted) bind = Bind::kNone;
  if (!bind) return {};
  PARTITA_CHECK(*bind != Bind::kCore || srun || cores < 1 || ppn <= cores, UsageError,
                "--bind core: {} ranks per host but {} cores per host (pass --bind none, or "
                "--cores-per-host N if the hosts have more cores than this one)",
                ppn, cores);
  const std::string per_node = "ppr:" + std::to_string(ppn) + ":node";
  const std::string pe = cores > 0 ? std::to_string(cores / ppn) : "";
  switch (*bind) {
    case Bind::kCore:
      if (srun) return {"--cpu-bind=cores"};  // Slurm divides the allocation's CPUs
      // Several sockets: the same number of ranks on each, so that none spans two.
      if (sockets > 1 && ppn % sockets == 0 && !pe.empty() && cores % sockets == 0)
        return {"--map-by",
                "ppr:" + std::to_string(ppn / sockets) +
                    ":socket:PE=" + std::to_string(cores / sockets / (ppn / sockets)),
                "--bind-to", "core"};
      return {"--map-by", pe.empty() ? per_node : per_node + ":PE=" + pe, "--bind-to", "core"};
    case Bind::kSocket:
      if (srun) return {"--cpu-bind=sockets"};
      return {"--map-by", per_node, "--bind-to", "socket"};
    case Bind::kNone:
      if (srun) return {"--cpu-bind=none"};
      return {"--map-by", per_node, "--bind-to", "none"};
  }
  return {};
}

}  // namespace partita::cli
