// The partition pipeline's steps for typed (heterogeneous) datasets.
#include "typed_dataset.h"

#include <algorithm>

#include "partita/core/error.h"

namespace partita::partition {

void check_typed_dataset(const data::Dataset& ds, const std::string& name) {
  const data::HeteroSchema& h = *ds.hetero;
  const int64_t n = ds.num_nodes;
  PARTITA_CHECK(h.num_types() >= 1, Error, "{}: a typed dataset without node types", name);
  PARTITA_CHECK(ds.features.cols() == 0, Error,
                "{}: a typed dataset has per-type features only, found {} shared columns", name,
                ds.features.cols());
  int64_t offset = 0;
  for (const data::NodeType& t : h.node_types) {
    PARTITA_CHECK(valid_type_name(t.name), Error,
                  "{}: node type '{}' cannot name a file (1 to 128 of [A-Za-z0-9_-])", name,
                  t.name);
    PARTITA_CHECK(h.find_type(t.name) == &t - h.node_types.data(), Error,
                  "{}: node type '{}' appears twice", name, t.name);
    PARTITA_CHECK(t.offset == offset && t.count >= 1, Error,
                  "{}: node type '{}' holds [{}, {}), expected a non-empty range from {}", name,
                  t.name, t.offset, t.offset + t.count, offset);
    PARTITA_CHECK(t.feat_dim() == 0 || t.features.rows() == t.count, Error,
                  "{}: node type '{}' has {} feature rows for {} nodes", name, t.name,
                  t.features.rows(), t.count);
    offset += t.count;
  }
  PARTITA_CHECK(offset == n, Error, "{}: node types hold {} nodes, expected {}", name, offset, n);
  PARTITA_CHECK(h.target_type >= 0 && h.target_type < h.num_types(), Error,
                "{}: target type {} of {} types", name, h.target_type, h.num_types());
  PARTITA_CHECK(static_cast<int64_t>(ds.edge_relation.size()) == ds.in_edges.num_entries(), Error,
                "{}: {} edge relations for {} edges", name, ds.edge_relation.size(),
                ds.in_edges.num_entries());
  for (const data::Relation& r : h.relations)
    PARTITA_CHECK(r.src_type >= 0 && r.src_type < h.num_types() && r.dst_type >= 0 &&
                      r.dst_type < h.num_types(),
                  Error, "{}: relation '{}' names types {} and {} of {}", name, r.name, r.src_type,
                  r.dst_type, h.num_types());
  std::vector<int64_t> counts(static_cast<size_t>(h.num_relations()), 0);
  for (size_t k = 0; k < ds.edge_relation.size(); ++k) {
    const int32_t rel = ds.edge_relation[k];
    PARTITA_CHECK(rel >= 0 && rel < h.num_relations(), Error,
                  "{}: edge {} has relation {}, outside [0, {})", name, k, rel, h.num_relations());
    ++counts[rel];
  }
  for (int r = 0; r < h.num_relations(); ++r)
    PARTITA_CHECK(counts[r] == h.relations[r].num_edges, Error,
                  "{}: relation '{}' has {} edges, its schema says {}", name, h.triplet(r),
                  counts[r], h.relations[r].num_edges);
  PARTITA_CHECK(static_cast<int64_t>(ds.labels.size()) == n, Error, "{}: {} labels, expected {}",
                name, ds.labels.size(), n);
  const data::NodeType& target = h.node_types[h.target_type];
  for (int64_t v = 0; v < n; ++v) {
    const bool labelled = v >= target.offset && v < target.offset + target.count;
    PARTITA_CHECK(
        labelled ? ds.labels[v] >= 0 && ds.labels[v] < ds.num_classes : ds.labels[v] == -1, Error,
        "{}: label {} of node {} ({} type '{}'), expected {}", name, ds.labels[v], v,
        labelled ? "target" : "non-target", h.node_types[h.type_of(v)].name,
        labelled ? fmt::format("[0, {})", ds.num_classes) : std::string("-1"));
  }
  for (const auto* ids : {&ds.train_idx, &ds.valid_idx, &ds.test_idx})
    for (int64_t id : *ids)
      PARTITA_CHECK(id >= target.offset && id < target.offset + target.count, Error,
                    "{}: split id {} is not of the target type '{}'", name, id, target.name);
}

graph::Csr homogeneous_rows(const graph::Csr& in, int threads) {
  graph::Csr out = in;
  graph::sort_and_dedup_rows(out, threads);
  return out;
}

TypedMeta typed_meta(const data::HeteroSchema& h, const WriteResult& written) {
  std::vector<int64_t> feat_dims;
  for (const data::NodeType& t : h.node_types) feat_dims.push_back(t.feat_dim());
  return typed_meta(h, feat_dims, written);
}

TypedMeta typed_meta(const data::HeteroSchema& h, const std::vector<int64_t>& feat_dims,
                     const WriteResult& written) {
  TypedMeta m;
  for (int t = 0; t < h.num_types(); ++t) {
    const data::NodeType& type = h.node_types[t];
    m.node_types.push_back({type.name, type.count, feat_dims.at(t), type.offset});
  }
  for (int r = 0; r < h.num_relations(); ++r) {
    const data::Relation& rel = h.relations[r];
    int64_t edges = 0;
    for (const PartStats& p : written.parts) edges += p.relation_edges[r];
    m.relations.push_back({rel.name, rel.src_type, rel.dst_type, edges, rel.reverse});
  }
  m.target_type = h.target_type;
  m.reverse_relations = std::any_of(h.relations.begin(), h.relations.end(),
                                    [](const data::Relation& r) { return r.reverse; });
  m.type_starts = written.type_starts;
  return m;
}

}  // namespace partita::partition
