#pragma once
// The Trainer's options resolved against the graph it trains on (private to train/): input
// and output widths taken from the graph (link task: embeddings as wide as the hidden
// layers). The fanouts arrive resolved (train::resolve_fanouts, trainer.h); per-relation
// fanouts that do not fit the graph are a ParameterError(fanouts).
#include "partita/store/dist_graph.h"
#include "partita/train/trainer.h"

namespace partita::train {

TrainOptions resolved_options(const store::DistGraph& graph, TrainOptions options);

}  // namespace partita::train
