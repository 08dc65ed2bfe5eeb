#pragma once
// Private to partition/: the pipeline's input, checked once before anything indexes with it.
#include "partita/partition/pipeline.h"

namespace partita::partition {

// The options alone: num_parts in [1, 2^20], an output directory. ParameterError naming
// `num_parts` or `out_dir`; the same verdict on every rank.
void check_options(const PartitionOptions& options);

// The options and this rank's input against the contract every later stage relies on,
// unchecked (data/dataset.h, data/hetero.h): num_parts in [1, nodes], an output directory;
// labels in [0, num_classes) or -1 (typed: -1 exactly outside the target type); split ids
// ascending, in the block, labelled (typed: of the target type); typed: node types tiling
// [0, num_nodes) with names usable in file names, relations naming existing types, every
// entry's relation in range, a feature reader per type. ParameterError naming `num_parts` or
// `out_dir`, Error naming the dataset otherwise; on several ranks the failure is agreed.
void check_input(const PartitionInput& input, const PartitionOptions& options, DistComm& comm);

}  // namespace partita::partition
