#pragma once
// The ids of a split (training, validation, test) that the global batch plan of a job is
// built from (loader::GlobalBatches): every id of the split in the job, each with its
// original (dataset) id, which orders the shuffle, and its global id, which the sampler
// takes. One place gathers them for every role (session.h, Roles).
#include <vector>

#include "partita/runtime/session.h"
#include "partita/store/dist_graph.h"
#include "partita/store/seed_id.h"

namespace partita::runtime {

// The ids of `split` in this rank's own part, in the part's order; none on a client
// (a trainer of server-client mode maps no part). Local, no communication.
std::vector<store::SeedId> own_split_ids(const store::DistGraph& graph, Split split);

// Every id of `split` in the job, on a rank that trains. A trainer of server-client mode
// gets those the session gathered from the servers at set-up (Session::job_ids); a
// replicated worker its own (it holds every id); any other worker those of every worker,
// in rank order, through one allgather over session.collectives(): collective among the
// workers (bounded by the collectives' deadline). Throws Error on a server.
std::vector<store::SeedId> split_ids(Session& session, Split split);

}  // namespace partita::runtime
