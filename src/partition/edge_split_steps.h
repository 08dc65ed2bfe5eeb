#pragma once
// Private to partition/: the link-prediction split as the pipeline makes and writes it
// (edge_split.h states what is held out), in shares over a communicator; one rank holds
// everything. The held-out units, negatives and files do not depend on the rank count.
//
// Sampled split: units (at random one per pair, the first of its copies, which share a row)
// are numbered in order of destination, then source, so rank r's units follow those of ranks
// below it; every rank replays the one random stream (edge_split_draw.h) and keeps what falls
// in its range. The replay holds units/8 bytes of membership bits and 16 bytes per held-out
// unit on every rank (no edge lists). Negatives by rejection ask, per batch of candidates,
// each rank about the rows and the accepted pairs (a hash share) it holds; on graphs dense
// enough for enumeration every rank gathers an n x n adjacency bitmap (such graphs have at
// least n^2/6 units).
// Split by time: each rank offers its latest valid + test units (time, unit index, pair; 32
// bytes each) to every rank, which keeps the latest of them all: the same picks on every rank
// for any rank count, without a random stream (the negatives' stream then starts unused).
// Dataset split (train_edges.npy ...): each rank holds its rows of each file; the checks run
// where the pairs meet (row owners, a pair's hash owner): a negative must not be an edge
// either way nor a held-out positive, nor repeat another (as an unordered pair, across both
// files); a training pair must not be held out.
#include <optional>
#include <string>
#include <vector>

#include "layout.h"
#include "partita/partition/edge_split.h"
#include "partita/partition/format.h"
#include "partita/partition/pipeline.h"

namespace partita::partition {

// Collective. The split `options.edge_split` or the input's own files ask for (nullopt:
// none), from the full graph (before removal). Throws on every rank alike: ParameterError
// naming `edge_split` (typed dataset, both a flag and files, nothing left to train on, too
// few non-edges), FormatError naming `<dataset>/valid_neg.npy` ... for a dataset split that
// breaks the rules above.
std::optional<HeldOutEdges> make_edge_split(const PartitionInput& input,
                                            const PartitionOptions& options, DistComm& comm);

// Collective: drops every valid and test pair from `graph` in both directions (rows stay
// sorted) and updates num_edges_total.
void remove_held_out(ShardGraph& graph, const HeldOutEdges& held, DistComm& comm);

// Collective: writes edges/*.npy (format.h kEdgeSplitFiles) and part<p>/train_edges.npy,
// pairs in new ids: sampled held-out sets sorted by (src, dst), the dataset's in their order;
// training pairs bucketed by the owner of their destination, sorted by (dst, src), repeats
// dropped. Appends the files this rank finished to `files`; returns the figures (the same on
// every rank). Throws (agreed) IoError.
EdgeSplitStats write_edge_split(const HeldOutEdges& held, const PartLayout& layout,
                                const std::string& out_dir, DistComm& comm, int threads,
                                std::vector<FileEntry>* files);

}  // namespace partita::partition
