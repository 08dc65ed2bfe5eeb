// METIS k-way assignment on the symmetrized graph.
#include <metis.h>

#include <type_traits>

#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/core/timer.h"
#include "partita/partition/assign.h"
#include "rebalance.h"

namespace partita::partition {
namespace {

static_assert(std::is_same_v<idx_t, int32_t>,
              "this build expects METIS with 32-bit idx_t (Debian's libmetis-dev)");

const char* metis_status_name(int status) {
  return status == METIS_ERROR_INPUT    ? "METIS_ERROR_INPUT (invalid input)"
         : status == METIS_ERROR_MEMORY ? "METIS_ERROR_MEMORY (out of memory)"
         : status == METIS_ERROR        ? "METIS_ERROR (internal error)"
                                        : "unknown METIS status";
}

}  // namespace

std::vector<int32_t> assign_metis(const graph::CsrOf<int32_t>& adj,
                                  ArrayView<const int64_t> in_degree_indptr,
                                  ArrayView<const int64_t> train_idx,
                                  const MetisAssignOptions& options, MetisAssignStats* stats) {
  MetisAssignStats local;
  MetisAssignStats& st = stats != nullptr ? *stats : local;
  const int64_t n = adj.num_rows();
  PARTITA_CHECK(options.num_parts >= 1 && in_degree_indptr.size() == n + 1, Error,
                "internal: assign_metis with {} parts, {} nodes, {} in-degree offsets",
                options.num_parts, n, in_degree_indptr.size());
  std::vector<int32_t> part(static_cast<size_t>(n), 0);
  if (options.num_parts == 1 || n == 0) return part;  // nothing to cut; METIS not called

  // Vertex weights, row-major [n, ncon] (constraint_weights: those of zero total dropped);
  // the int64 columns are freed before METIS runs.
  OneRankComm alone;
  std::vector<idx_t> vwgt;
  int ncon = 1;
  {
    const std::vector<std::vector<int64_t>> weight =
        constraint_weights(in_degree_indptr, /*node_begin=*/0, train_idx, options, alone);
    ncon = static_cast<int>(weight.size());
    vwgt.reserve(ncon > 1 ? static_cast<size_t>(n) * ncon : 0);
    for (int64_t v = 0; v < n && ncon > 1; ++v)  // in-degrees fit: adj holds the in-edges
      for (int c = 0; c < ncon; ++c) vwgt.push_back(static_cast<idx_t>(weight[c][v]));
  }
  st.num_constraints = ncon;

  idx_t options_arr[METIS_NOPTIONS];
  int status = METIS_SetDefaultOptions(options_arr);
  PARTITA_CHECK(status == METIS_OK, Error, "METIS_SetDefaultOptions failed: {}",
                metis_status_name(status));
  options_arr[METIS_OPTION_NUMBERING] = 0;
  options_arr[METIS_OPTION_SEED] = static_cast<idx_t>(options.seed & 0x7fffffffULL);

  idx_t nvtxs = static_cast<idx_t>(n), ncon_arg = ncon, nparts = options.num_parts, objval = 0;
  log_info("partition: METIS k-way, {} nodes, {} adjacency entries, {} parts, {} constraint(s)", n,
           adj.num_entries(), options.num_parts, ncon);
  Stopwatch watch;
  // METIS takes non-const pointers but does not modify the graph arrays.
  status = METIS_PartGraphKway(&nvtxs, &ncon_arg, const_cast<idx_t*>(adj.indptr.data()),
                               const_cast<idx_t*>(adj.indices.data()),
                               vwgt.empty() ? nullptr : vwgt.data(), /*vsize=*/nullptr,
                               /*adjwgt=*/nullptr, &nparts, /*tpwgts=*/nullptr,
                               /*ubvec=*/nullptr, options_arr, &objval, part.data());
  st.metis_s = watch.seconds();
  PARTITA_CHECK(status == METIS_OK, Error,
                "METIS_PartGraphKway failed partitioning {} nodes ({} adjacency entries, {} "
                "constraint(s)) into {} parts: {}",
                n, adj.num_entries(), ncon, options.num_parts, metis_status_name(status));
  st.objective = objval;
  for (int32_t p : part)
    PARTITA_CHECK(p >= 0 && p < options.num_parts, Error,
                  "METIS_PartGraphKway returned part {} outside [0, {})", p, options.num_parts);
  // METIS may leave parts empty on tiny graphs (seen with a handful of nodes per part).
  st.filled_empty_parts = fill_empty_parts(/*node_begin=*/0, part, options.num_parts, alone);
  if (st.filled_empty_parts > 0)
    log_warning(
        "partition: METIS left {} of {} parts empty; each got one node from the largest part",
        st.filled_empty_parts, options.num_parts);
  // METIS counts each undirected edge between parts once; the summary's "edge cut" counts
  // stored in-edges (both directions, and only those of the graph as loaded).
  log_info(
      "partition: METIS done in {:.2f} s, {} undirected edges cut (METIS's objective; the "
      "summary counts directed in-edges)",
      st.metis_s, objval);
  return part;
}

}  // namespace partita::partition
