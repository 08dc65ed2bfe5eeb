#pragma once
// partition_dataset with the assignment given instead of computed: the seam that lets the
// writer on several ranks (pipeline.h) be checked against one process for the same
// assignment, and lets callers that assign nodes themselves write the standard partition
// directory.
#include <cstdint>
#include <vector>

#include "partita/partition/partition.h"

namespace partita::partition {

// Same contract as partition_dataset, except that node v goes to part part[v] (in
// [0, options.num_parts)); options.method, seed and balance flags are only recorded in
// partita.json. An edge split (options.edge_split or the dataset's own) is made as
// partition_dataset makes it. Throws ParameterError naming `part` when its size is not the
// number of nodes or a value lies outside [0, num_parts).
PartitionSummary partition_dataset_assigned(const data::Dataset& dataset,
                                            const PartitionOptions& options,
                                            const std::vector<int32_t>& part);

}  // namespace partita::partition
