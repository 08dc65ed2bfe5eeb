// See shard_classes.h.
#include "shard_classes.h"

#include <vector>

#include "collective.h"
#include "partita/data/class_count.h"

namespace partita::partition {

int64_t shard_num_classes(const data::DatasetShard& shard, int64_t given, DistComm& comm) {
  data::ClassCensus mine;
  mine.add(shard.labels);
  data::ClassCountInput in{
      shard.path, {}, shard.layout == "chunked" ? shard.num_classes : 0, given};
  for (const std::vector<int64_t>& labels : gather_ints(mine.classes(), comm))
    in.census.merge(data::ClassCensus::of(labels));
  // The same inputs on every rank: the same count, or the same error, everywhere.
  return data::resolve_num_classes(in);
}

}  // namespace partita::partition
