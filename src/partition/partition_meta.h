#pragma once
// Private to partition/: partita.json's content for a written partition, shared by the
// single-process pipeline (partition.cc) and the distributed writer (dist_writer.cc), so
// both describe the same arrays with the same metadata.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "partita/partition/format.h"
#include "writer.h"

namespace partita::partition {

using Phases = std::vector<std::pair<std::string, double>>;

// What the metadata takes from the dataset rather than from what was written.
struct DatasetFacts {
  std::string dataset;  // the dataset directory
  int64_t num_nodes = 0;
  int64_t feat_dim = 0;  // typed: 0
  int64_t num_classes = 0;
};

// The metadata of a written partition: the options' settings, the dataset's facts, the
// renumbering's ranges, the files, figures and (typed) type starts of `written`. The
// summary's peak RSS is this process's so far.
PartitionMeta assemble_meta(const PartitionOptions& options, const DatasetFacts& facts,
                            std::vector<int64_t> ranges, std::optional<TypedMeta> typed,
                            WriteResult written, Phases phases,
                            std::optional<EdgeSplitStats> edge_split);

// The warnings a finished partition deserves: empty parts, parts without training nodes.
void warn_about_parts(const PartitionSummary& summary, const PartitionOptions& options);

}  // namespace partita::partition
