// The pipeline's input: a loaded dataset as one rank's share, and the one check of every
// input (input.h).
#include "input.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#include "collective.h"
#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/partition/format.h"

namespace partita::partition {
namespace {

constexpr int kMaxParts = 1 << 20;  // far beyond any cluster; keeps the writer's keys small

// The dataset directory for messages ("dataset" for an in-memory one without a path).
std::string dataset_name(const std::string& path) {
  return path.empty() ? std::string("dataset") : path;
}

// `owned` is the same object as `ds` when the input may take its arrays, else nullptr.
PartitionInput make_input(const data::Dataset& ds, data::Dataset* owned) {
  const int64_t n = ds.num_nodes;
  const std::string name = dataset_name(ds.path);
  PARTITA_CHECK(ds.in_edges.num_rows() == n, Error, "{}: graph has {} rows, expected {} nodes",
                name, ds.in_edges.num_rows(), n);
  PARTITA_CHECK(static_cast<int64_t>(ds.labels.size()) == n, Error, "{}: {} labels, expected {}",
                name, ds.labels.size(), n);
  // `owned` is `ds` itself, so its fields are not const: moving from them is sound.
  auto take = [&](const auto& field) {
    using T = std::decay_t<decltype(field)>;
    return owned != nullptr ? T(std::move(const_cast<T&>(field))) : T(field);
  };
  // A float32 matrix as a shard's feature reader, taken along when the dataset is, else read
  // where it is; the pages read are released (mapped features are read once, in order).
  auto features = [&](const data::FeatureMatrix& matrix) {
    const std::shared_ptr<const data::FeatureMatrix> f =
        owned != nullptr ? std::make_shared<const data::FeatureMatrix>(
                               std::move(const_cast<data::FeatureMatrix&>(matrix)))
                         : std::shared_ptr<const data::FeatureMatrix>(&matrix, [](auto*) {});
    return data::ShardFeatures{
        f->cols(), DType::kFloat32, [f](int64_t begin, int64_t end, void* dst) {
          if (end <= begin || f->cols() == 0) return;
          std::memcpy(dst, f->row(begin),
                      static_cast<size_t>((end - begin) * f->cols()) * sizeof(float));
          f->release_rows(begin, end);
        }};
  };
  PartitionInput in;
  data::DatasetShard& s = in.shard;
  s.path = ds.path;
  s.layout = ds.layout;
  s.num_nodes = n;
  s.num_classes = ds.num_classes;
  s.node_end = n;
  s.input_edges_total = ds.input_edges;
  s.labels = take(ds.labels);
  s.train_idx = take(ds.train_idx);
  s.valid_idx = take(ds.valid_idx);
  s.test_idx = take(ds.test_idx);
  s.edge_split = take(ds.edge_split);
  if (ds.hetero) {
    PARTITA_CHECK(ds.features.cols() == 0, Error,
                  "{}: a typed dataset has per-type features only, found {} shared columns", name,
                  ds.features.cols());
    data::HeteroSchema& h = s.hetero.emplace();  // move-only: its features are not copied
    for (const data::NodeType& t : ds.hetero->node_types) {
      PARTITA_CHECK(t.feat_dim() == 0 || t.features.rows() == t.count, Error,
                    "{}: node type '{}' has {} feature rows for {} nodes", name, t.name,
                    t.features.rows(), t.count);
      h.node_types.push_back({t.name, t.count, t.offset, {}});
      s.type_features.push_back(t.feat_dim() > 0 ? features(t.features) : data::ShardFeatures{});
    }
    h.relations = ds.hetero->relations;
    h.target_type = ds.hetero->target_type;
    in.graph.edge_relation = take(ds.edge_relation);
    // The loaders add every relation's reverse, or none.
    in.graph.symmetric = std::any_of(h.relations.begin(), h.relations.end(),
                                     [](const data::Relation& r) { return r.reverse; });
  } else {
    PARTITA_CHECK(ds.features.rows() == n, Error, "{}: features have {} rows, expected {}", name,
                  ds.features.rows(), n);
    s.features = features(ds.features);
  }
  in.graph.num_nodes = n;
  in.graph.node_end = n;
  in.graph.num_edges_total = ds.in_edges.num_entries();
  for (const data::ExtraArray& a : ds.edge_arrays)
    PARTITA_CHECK(a.rows() == ds.in_edges.num_entries(), Error, "{}: {} holds {} rows for {} edges",
                  name, a.name, a.rows(), ds.in_edges.num_entries());
  in.graph.in_edges = take(ds.in_edges);
  for (const data::ExtraArray& a : ds.node_arrays)
    PARTITA_CHECK(a.rows() == n, Error, "{}: {} holds {} rows for {} nodes", name, a.name, a.rows(),
                  n);
  in.graph.edge_columns = array_columns(take(ds.edge_arrays));
  in.node_columns = array_columns(take(ds.node_arrays));
  return in;
}

}  // namespace

std::vector<Column> array_columns(std::vector<data::ExtraArray>&& arrays) {
  std::vector<Column> out;
  for (data::ExtraArray& a : arrays)
    out.push_back({std::move(a.name), a.dtype, std::move(a.values), a.dim});
  return out;
}

PartitionInput dataset_input(const data::Dataset& dataset) { return make_input(dataset, nullptr); }

PartitionInput dataset_input(data::Dataset&& dataset) { return make_input(dataset, &dataset); }

void check_options(const PartitionOptions& o) {
  PARTITA_CHECK_PARAM(o.num_parts >= 1, "num_parts", "must be at least 1, got {}", o.num_parts);
  PARTITA_CHECK_PARAM(o.num_parts <= kMaxParts, "num_parts", "at most {}, got {}", kMaxParts,
                      o.num_parts);
  PARTITA_CHECK_PARAM(!o.out_dir.empty(), "out_dir", "an output directory is required");
}

void check_input(const PartitionInput& input, const PartitionOptions& o, DistComm& comm) {
  const data::DatasetShard& s = input.shard;
  const int64_t n = s.num_nodes;
  const std::string name = dataset_name(s.path);
  // The same on every rank, so every rank throws alike.
  check_options(o);
  PARTITA_CHECK_PARAM(o.num_parts <= n, "num_parts", "{} parts requested but {} has only {} nodes",
                      o.num_parts, name, n);
  agreed(comm, [&] {
    const int64_t rows = s.node_end - s.node_begin;
    PARTITA_CHECK(static_cast<int64_t>(s.labels.size()) == rows, Error,
                  "internal: {} labels for a block of {} nodes", s.labels.size(), rows);
    const data::HeteroSchema* h = s.hetero ? &*s.hetero : nullptr;
    // Labelled nodes: every node, or the target type's.
    int64_t labelled_begin = 0, labelled_end = n;
    if (h != nullptr) {
      PARTITA_CHECK(h->num_types() >= 1, Error, "{}: a typed dataset without node types", name);
      int64_t offset = 0;
      for (const data::NodeType& t : h->node_types) {
        PARTITA_CHECK(valid_type_name(t.name), Error,
                      "{}: node type '{}' cannot name a file (1 to 128 of [A-Za-z0-9_-])", name,
                      t.name);
        PARTITA_CHECK(h->find_type(t.name) == &t - h->node_types.data(), Error,
                      "{}: node type '{}' appears twice", name, t.name);
        PARTITA_CHECK(t.offset == offset && t.count >= 1, Error,
                      "{}: node type '{}' holds [{}, {}), expected a non-empty range from {}", name,
                      t.name, t.offset, t.offset + t.count, offset);
        offset += t.count;
      }
      PARTITA_CHECK(offset == n, Error, "{}: node types hold {} nodes, expected {}", name, offset,
                    n);
      PARTITA_CHECK(h->target_type >= 0 && h->target_type < h->num_types(), Error,
                    "{}: target type {} of {} types", name, h->target_type, h->num_types());
      PARTITA_CHECK(static_cast<int>(s.type_features.size()) == h->num_types(), Error,
                    "internal: {} feature readers for {} node types", s.type_features.size(),
                    h->num_types());
      for (const data::Relation& r : h->relations)
        PARTITA_CHECK(r.src_type >= 0 && r.src_type < h->num_types() && r.dst_type >= 0 &&
                          r.dst_type < h->num_types(),
                      Error, "{}: relation '{}' names types {} and {} of {}", name, r.name,
                      r.src_type, r.dst_type, h->num_types());
      const std::vector<int32_t>& rel = input.graph.edge_relation;
      PARTITA_CHECK(static_cast<int64_t>(rel.size()) == input.graph.in_edges.num_entries(), Error,
                    "{}: {} edge relations for {} edges", name, rel.size(),
                    input.graph.in_edges.num_entries());
      for (size_t k = 0; k < rel.size(); ++k)
        PARTITA_CHECK(rel[k] >= 0 && rel[k] < h->num_relations(), Error,
                      "{}: edge {} has relation {}, outside [0, {})", name, k, rel[k],
                      h->num_relations());
      const data::NodeType& target = h->node_types[h->target_type];
      labelled_begin = target.offset;
      labelled_end = target.offset + target.count;
    }
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t v = s.node_begin + i, label = s.labels[i];
      if (h == nullptr) {
        // -1 marks an unlabelled node, allowed outside the splits (checked with them below).
        PARTITA_CHECK(label >= -1 && label < s.num_classes, Error,
                      "{}: label {} of node {} is outside [0, {}) (or -1: unlabelled)", name, label,
                      v, s.num_classes);
        continue;
      }
      const bool labelled = v >= labelled_begin && v < labelled_end;
      PARTITA_CHECK(labelled ? label >= 0 && label < s.num_classes : label == -1, Error,
                    "{}: label {} of node {} ({} type '{}'), expected {}", name, label, v,
                    labelled ? "target" : "non-target", h->node_types[h->type_of(v)].name,
                    labelled ? fmt::format("[0, {})", s.num_classes) : std::string("-1"));
    }
    const std::pair<const char*, const std::vector<int64_t>*> splits[] = {
        {"train", &s.train_idx}, {"valid", &s.valid_idx}, {"test", &s.test_idx}};
    for (const auto& [split, ids] : splits)
      for (size_t i = 0; i < ids->size(); ++i) {
        const int64_t id = (*ids)[i];
        PARTITA_CHECK(id >= s.node_begin && id < s.node_end && (i == 0 || (*ids)[i - 1] < id),
                      Error, "{}: {} split: id {} at position {} is out of range or not ascending",
                      name, split, id, i);
        PARTITA_CHECK(h == nullptr || (id >= labelled_begin && id < labelled_end), Error,
                      "{}: split id {} is not of the target type '{}'", name, id,
                      h != nullptr ? h->node_types[h->target_type].name : "");
        PARTITA_CHECK(s.labels[id - s.node_begin] >= 0, Error,
                      "{}: node {} is in the {} split but has label {} (unlabelled)", name, id,
                      split, s.labels[id - s.node_begin]);
      }
  });
}

}  // namespace partita::partition
