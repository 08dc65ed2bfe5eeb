#pragma once
// The class count of a dataset read in shares (private to partition/): each rank's census of
// its block's labels, gathered, then data::resolve_num_classes (data/class_count.h), so the
// distributed pipeline counts and refuses classes as load_dataset does in one process.
#include <cstdint>

#include "partita/data/shard.h"
#include "partita/partition/dist_comm.h"

namespace partita::partition {

// Collective (one allgather). Every rank gets the same count, or throws the same error.
// `given`: data::LoadOptions::num_classes.
int64_t shard_num_classes(const data::DatasetShard& shard, int64_t given, DistComm& comm);

}  // namespace partita::partition
