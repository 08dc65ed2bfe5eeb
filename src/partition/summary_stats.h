#pragma once
// Private to partition/: building the summary figures of a run.
#include <string>
#include <utility>
#include <vector>

#include "partita/partition/partition.h"

namespace partita::partition {

// Fills totals, cut fraction, imbalances (max / mean; 1 when the total is 0) and the peak
// RSS so far from the per-part figures of a finished write.
PartitionSummary make_summary(std::vector<PartStats> parts, int64_t edge_cut,
                              std::vector<std::pair<std::string, double>> phases);

}  // namespace partita::partition
