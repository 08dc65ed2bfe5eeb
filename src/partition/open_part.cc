// Mapping one part's arrays: the fast start-up path (headers only, no data read).
#include <utility>

#include "partita/core/error.h"
#include "partita/partition/format.h"

namespace partita::partition {
namespace {

NpyArray open_checked(const std::string& dir, const PartitionMeta& meta, int part,
                      const std::string& name) {
  const std::string rel = part_file(part, name);
  const FileEntry& entry = meta.file(rel);
  NpyArray a = NpyArray::open(dir + "/" + rel);
  PARTITA_CHECK(a.dtype() == entry.dtype, FormatError,
                "{}: dtype {} does not match partita.json ({})", a.path(), dtype_name(a.dtype()),
                dtype_name(entry.dtype));
  PARTITA_CHECK(a.header().shape == entry.shape, FormatError,
                "{}: shape {} does not match partita.json ({})", a.path(),
                a.header().shape_string(), NpyHeader{entry.dtype, entry.shape}.shape_string());
  return a;
}

}  // namespace

PartFiles open_part(const std::string& dir, const PartitionMeta& meta, int part) {
  PARTITA_CHECK(part >= 0 && part < meta.num_parts, Error,
                "{}: part {} requested but the partition has {} parts", dir, part, meta.num_parts);
  PartFiles f;
  f.indptr = open_checked(dir, meta, part, "indptr");
  f.indices = open_checked(dir, meta, part, "indices");
  if (meta.typed) {
    f.etype = open_checked(dir, meta, part, "etype");
    f.type_feat.resize(static_cast<size_t>(meta.typed->num_types()));
    for (int t = 0; t < meta.typed->num_types(); ++t) {
      const TypedNodeType& type = meta.typed->node_types[t];
      if (type.feat_dim > 0)
        f.type_feat[t] = open_checked(dir, meta, part, type_feature_name(type.name));
    }
  } else {
    f.feat = open_checked(dir, meta, part, "feat");
  }
  f.label = open_checked(dir, meta, part, "label");
  f.train_idx = open_checked(dir, meta, part, "train_idx");
  f.valid_idx = open_checked(dir, meta, part, "valid_idx");
  f.test_idx = open_checked(dir, meta, part, "test_idx");
  for (const auto& [name, array] :
       {std::pair{"edge_time", &f.edge_time}, std::pair{"edge_weight", &f.edge_weight},
        std::pair{"edge_feat", &f.edge_feat}, std::pair{"node_time", &f.node_time}})
    if (meta.has_file(part_file(part, name))) *array = open_checked(dir, meta, part, name);
  return f;
}

}  // namespace partita::partition
