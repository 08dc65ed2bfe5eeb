#pragma once
// Private to partition/: stage 3 of the pipeline (pipeline.h write_partition) with the knobs
// run_partition needs beyond the public form.
#include <cstdint>

#include "partita/partition/edge_split.h"
#include "partita/partition/pipeline.h"

namespace partita::partition {

struct WriteContext {
  Phases phases;  // earlier phases (read or load, split, assign), first in partita.json
  // Bounds of one round of the exchange, per sending rank: in-edges, and feature bytes read
  // plus converted (a row heavier than the bound goes alone). Tests shrink them to run many
  // rounds. 8 MiB keeps one process's peak near a direct write's (Cora: 31 MiB at 32 MiB).
  int64_t round_entries = int64_t{1} << 22;
  int64_t round_feature_bytes = int64_t{8} << 20;
  // The link-prediction split made before assignment (edge_split_steps.h), written with the
  // parts; required when the options or the input ask for one.
  const HeldOutEdges* edge_split = nullptr;
};

PartitionSummary write_partition(const PartitionInput& input, const std::vector<int32_t>& part,
                                 const PartitionOptions& options, DistComm& comm,
                                 WriteContext context);

}  // namespace partita::partition
