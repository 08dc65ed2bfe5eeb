#pragma once
// Private to partition/: stage 3 of the distributed pipeline with the knobs
// run_partition_distributed needs beyond the public write_partition_distributed.
#include <optional>

#include "partita/partition/dist_partition.h"
#include "partition_meta.h"

namespace partita::partition {

struct ShardHeldOut;  // dist_edge_split.h

struct DistWriteContext {
  Phases phases;  // earlier phases (read, graph, assign), first in partita.json
  // Typed shards: whether stage 1 added the reverse relations; nullopt: inferred from the
  // largest relation id stored (wrong only when the last input relation has no edge).
  std::optional<bool> reverse_relations;
  // Bounds of one round of the exchange, per sending rank: in-edges, and feature bytes (a
  // row heavier than the bound goes alone). Tests shrink them to run many rounds.
  int64_t round_entries = int64_t{1} << 22;
  int64_t round_feature_bytes = int64_t{32} << 20;
  // The link-prediction split made before assignment (dist_edge_split.h), written with the
  // parts; required when the options or the shard ask for one.
  const ShardHeldOut* edge_split = nullptr;
};

PartitionSummary write_partition_distributed(const data::DatasetShard& shard,
                                             const ShardGraph& graph,
                                             const std::vector<int32_t>& part,
                                             const PartitionOptions& options, DistComm& comm,
                                             DistWriteContext context);

}  // namespace partita::partition
