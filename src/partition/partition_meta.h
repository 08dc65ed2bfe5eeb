#pragma once
// Private to partition/: what the writers (writer.cc, edge_split.cc) and partita.json's
// reader (meta.cc) share about a partition's content.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "partita/partition/format.h"
#include "partita/partition/pipeline.h"

namespace partita::partition {

// summary.parts[p]'s counts and edge_split's row counts, in partita.json's order (written and
// read from these tables): the split counts train, valid, test from index 2, the edge split's
// rows in kEdgeSplitFiles' order.
constexpr std::pair<const char*, int64_t PartStats::*> kPartCounts[] = {
    {"nodes", &PartStats::nodes},
    {"edges", &PartStats::edges},
    {"train", &PartStats::train_nodes},
    {"valid", &PartStats::valid_nodes},
    {"test", &PartStats::test_nodes}};
constexpr std::pair<const char*, int64_t EdgeSplitStats::*> kEdgeSplitCounts[] = {
    {"valid", &EdgeSplitStats::valid},
    {"valid_neg", &EdgeSplitStats::valid_neg},
    {"test", &EdgeSplitStats::test},
    {"test_neg", &EdgeSplitStats::test_neg}};

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
