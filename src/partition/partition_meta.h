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
  // node_map.npy, then per part: indptr, indices, the edge columns (etype), the features,
  // the node columns (label), the splits; then the edge split's files.
  std::vector<FileEntry> files;
  std::vector<PartStats> parts;  // typed datasets: with type_nodes and relation_edges
  std::vector<int64_t> ranges;   // num_parts + 1
  // Typed datasets only: TypedMeta::type_starts of the partition written.
  std::vector<std::vector<int64_t>> type_starts;
  int64_t edge_cut = 0;  // stored in-edges whose source is owned by another part
  std::optional<EdgeSplitStats> edge_split;
  Phases phases;
};

// The metadata of a partition of `shard`'s dataset written with `options`: the options'
// settings, the dataset's counts and schema (typed: relations as stored), and `written`.
// The summary's totals, cut fraction and imbalances (max / mean) come from the parts, its
// peak RSS is this process's so far.
PartitionMeta assemble_meta(const PartitionOptions& options, const data::DatasetShard& shard,
                            WriteResult written);

// partita.json's "files" object as text, and back (how ranks tell rank 0 what they wrote).
// FormatError naming `source` for text that is not such an object.
std::string files_to_json(const std::vector<FileEntry>& files);
std::vector<FileEntry> files_from_json(const std::string& text, const std::string& source);

// One array partita.json lists for a part (part_file(p, name)): the dtype and shape its
// counts imply, and where open_part maps it (`slot`, or type_feat[type] when slot is null).
struct PartArray {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  NpyArray PartFiles::*slot;
  int type = -1;
};
// Part p's arrays in read_meta's checking order: indptr, indices, etype and each type's
// features with features (typed) or feat, label, the split ids, then the optional arrays
// part 0 lists (edge_feat as wide and of the dtype part 0 lists: read_meta checks those
// first). `meta` holds the summary's per-part figures and, typed, checked type_starts.
std::vector<PartArray> part_arrays(const PartitionMeta& meta, int p);

// The warnings a finished partition deserves: empty parts, parts without training nodes.
void warn_about_parts(const PartitionSummary& summary, const PartitionOptions& options);

}  // namespace partita::partition
