// Mapping one part's arrays: the fast start-up path (headers only, no data read), and the
// list of a part's arrays that read_meta checks and open_part maps.
#include <utility>

#include "partita/core/error.h"
#include "partita/partition/format.h"
#include "partition_meta.h"

namespace partita::partition {

std::vector<PartArray> part_arrays(const PartitionMeta& m, int p) {
  const int64_t n = m.part_nodes(p);
  const PartStats& ps = m.summary.parts[p];
  std::vector<PartArray> out{{"indptr", DType::kInt64, {n + 1}, &PartFiles::indptr},
                             {"indices", DType::kInt64, {ps.edges}, &PartFiles::indices}};
  if (m.typed) {
    out.push_back({"etype", DType::kInt32, {ps.edges}, &PartFiles::etype});
    for (int t = 0; t < m.typed->num_types(); ++t) {
      const TypedNodeType& type = m.typed->node_types[t];
      const int64_t rows = m.typed->part_type_nodes(p, t);
      if (type.feat_dim > 0)
        out.push_back(
            {type_feature_name(type.name), m.feature_dtype, {rows, type.feat_dim}, nullptr, t});
    }
  } else {
    out.push_back({"feat", m.feature_dtype, {n, m.feat_dim}, &PartFiles::feat});
  }
  out.push_back({"label", DType::kInt64, {n}, &PartFiles::label});
  out.push_back({"train_idx", DType::kInt64, {ps.train_nodes}, &PartFiles::train_idx});
  out.push_back({"valid_idx", DType::kInt64, {ps.valid_nodes}, &PartFiles::valid_idx});
  out.push_back({"test_idx", DType::kInt64, {ps.test_nodes}, &PartFiles::test_idx});
  // The optional arrays: node_time one row per node, the edge arrays one per entry.
  for (const auto& [name, slot] : {std::pair{"edge_time", &PartFiles::edge_time},
                                   std::pair{"edge_weight", &PartFiles::edge_weight},
                                   std::pair{"edge_feat", &PartFiles::edge_feat},
                                   std::pair{"node_time", &PartFiles::node_time}}) {
    if (!m.has_array(name)) continue;
    const int64_t rows = slot == &PartFiles::node_time ? n : ps.edges;
    const FileEntry& first = m.file(part_file(0, name));
    if (slot == &PartFiles::edge_feat)
      out.push_back({name, first.dtype, {rows, first.shape[1]}, slot});
    else
      out.push_back(
          {name, slot == &PartFiles::edge_weight ? DType::kFloat32 : DType::kInt64, {rows}, slot});
  }
  return out;
}

PartFiles open_part(const std::string& dir, const PartitionMeta& meta, int part) {
  PARTITA_CHECK(part >= 0 && part < meta.num_parts, Error,
                "{}: part {} requested but the partition has {} parts", dir, part, meta.num_parts);
  PartFiles f;
  if (meta.typed) f.type_feat.resize(static_cast<size_t>(meta.typed->num_types()));
  for (const PartArray& array : part_arrays(meta, part)) {
    const std::string rel = part_file(part, array.name);
    const FileEntry& entry = meta.file(rel);
    NpyArray a = NpyArray::open(dir + "/" + rel);
    PARTITA_CHECK(a.dtype() == entry.dtype, FormatError,
                  "{}: dtype {} does not match partita.json ({})", a.path(), dtype_name(a.dtype()),
                  dtype_name(entry.dtype));
    PARTITA_CHECK(a.header().shape == entry.shape, FormatError,
                  "{}: shape {} does not match partita.json ({})", a.path(),
                  a.header().shape_string(), NpyHeader{entry.dtype, entry.shape}.shape_string());
    (array.slot ? f.*array.slot : f.type_feat[array.type]) = std::move(a);
  }
  return f;
}

}  // namespace partita::partition
