#pragma once
// Private to partition/: partita.json's content for a partition the writer wrote
// (writer.cc).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "partita/data/hetero.h"
#include "partita/partition/format.h"
#include "partita/partition/pipeline.h"

namespace partita::partition {

// What the writer wrote, over all ranks.
struct WriteResult {
  // node_map.npy, then per part in kPartArrayNames order (typed: etype after indices and
  // feat_<TYPE> per featured type in place of feat), then the edge split's files
  std::vector<FileEntry> files;
  std::vector<PartStats> parts;  // typed datasets: with type_nodes and relation_edges
  // Typed datasets only: TypedMeta::type_starts of the partition written.
  std::vector<std::vector<int64_t>> type_starts;
  int64_t edge_cut = 0;  // stored in-edges whose source is owned by another part
};

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

// partita.json's "files" object as text, and back (how ranks tell rank 0 what they wrote).
// FormatError naming `source` for text that is not such an object.
std::string files_to_json(const std::vector<FileEntry>& files);
std::vector<FileEntry> files_from_json(const std::string& text, const std::string& source);

// The "hetero" metadata of a written typed partition: the schema (relations as stored),
// the feature width of each type, relation edge counts and type starts from `written`.
TypedMeta typed_meta(const data::HeteroSchema& schema, const std::vector<int64_t>& feat_dims,
                     const WriteResult& written);

// The warnings a finished partition deserves: empty parts, parts without training nodes.
void warn_about_parts(const PartitionSummary& summary, const PartitionOptions& options);

}  // namespace partita::partition
