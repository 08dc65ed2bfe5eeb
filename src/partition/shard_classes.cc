// See shard_classes.h.
#include "shard_classes.h"

#include <cstring>
#include <vector>

#include "partita/data/class_count.h"

namespace partita::partition {

int64_t shard_num_classes(const data::DatasetShard& shard, int64_t given, DistComm& comm) {
  data::ClassCensus mine;
  mine.add(shard.labels);
  const std::vector<int64_t> classes = mine.classes();
  std::vector<uint8_t> bytes(classes.size() * sizeof(int64_t));
  if (!bytes.empty()) std::memcpy(bytes.data(), classes.data(), bytes.size());
  data::ClassCountInput in{
      shard.path, {}, shard.layout == "chunked" ? shard.num_classes : 0, given};
  for (const std::vector<uint8_t>& theirs : comm.allgather(bytes)) {
    std::vector<int64_t> labels(theirs.size() / sizeof(int64_t));
    if (!labels.empty()) std::memcpy(labels.data(), theirs.data(), labels.size() * sizeof(int64_t));
    in.census.merge(data::ClassCensus::of(labels));
  }
  // The same inputs on every rank: the same count, or the same error, everywhere.
  return data::resolve_num_classes(in);
}

}  // namespace partita::partition
