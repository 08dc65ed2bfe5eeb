#include "partita/store/dist_graph.h"

#include <algorithm>
#include <tuple>

#include "partita/core/error.h"
#include "partita/core/parameter_error.h"
#include "partita/store/single_process_error.h"

namespace partita::store {

namespace {

// `view` (elements [begin, begin + view.size()) of `file`) copied into `buffer` when asked
// to, dropping the file pages the copy touched from this process; else `view` itself.
template <class T>
ArrayView<const T> maybe_copy(ArrayView<const T> view, bool copy, HugeBuffer* buffer,
                              const NpyArray& file, int64_t begin = 0) {
  if (!copy) return view;
  *buffer = HugeBuffer::copy_of(view.data(), static_cast<size_t>(view.size()) * sizeof(T));
  file.release_elements(begin, begin + view.size());
  return {static_cast<const T*>(buffer->data()), view.size()};
}

// The arrays other code indexes with unchecked: the sampler reads indices[indptr[i] ..
// indptr[i+1]), the loss indexes its classes with labels, batches index rows with split ids.
// One pass over each (O(nodes) values, not the edges or features) so that a corrupt part is
// an error naming the file rather than a crash. Ids read from indices are checked where they
// are used (owner_rank). Everything else is `partita info --verify`'s job.
// Typed parts: relation ids index per-relation tables everywhere (sampler, model), so each
// one is checked once here (an O(edges) pass over int32 values).
void check_relations(const partition::PartitionMeta& meta, const partition::PartFiles& files,
                     const std::string& hint) {
  const ArrayView<const int32_t> etype = files.etype.view<int32_t>();
  const int32_t relations = meta.typed->num_relations();
  int32_t bad = 0;
  int64_t at = -1;
  for (int64_t k = 0; k < etype.size(); ++k) {
    if (static_cast<uint32_t>(etype[k]) >= static_cast<uint32_t>(relations)) {
      bad = etype[k];
      at = k;
      break;
    }
  }
  PARTITA_CHECK(at < 0, FormatError, "{}: entry {} = {} is not a relation id in [0, {}){}",
                files.etype.path(), at, bad, relations, hint);
}

void check_part(const std::string& dir, const partition::PartitionMeta& meta, int part,
                const partition::PartFiles& files) {
  const std::string hint = fmt::format(" (`partita info {} --verify` checks every file)", dir);
  const ArrayView<const int64_t> indptr = files.indptr.view<int64_t>();
  const int64_t rows = meta.part_nodes(part), edges = files.indices.num_elements();
  PARTITA_CHECK(indptr[0] == 0, FormatError, "{}: starts at {}, expected 0{}", files.indptr.path(),
                indptr[0], hint);
  for (int64_t i = 0; i < rows; ++i)
    PARTITA_CHECK(indptr[i + 1] >= indptr[i] && indptr[i + 1] <= edges, FormatError,
                  "{}: entry {} = {} is not an offset between {} and the edge count {}{}",
                  files.indptr.path(), i + 1, indptr[i + 1], indptr[i], edges, hint);
  PARTITA_CHECK(indptr[rows] == edges, FormatError, "{}: ends at {}, expected the edge count {}{}",
                files.indptr.path(), indptr[rows], edges, hint);
  const ArrayView<const int64_t> labels = files.label.view<int64_t>();
  int64_t lo = meta.ranges[part], hi = meta.ranges[part + 1];
  if (meta.typed) {
    check_relations(meta, files, hint);
    // Labels and splits belong to the target type's range.
    std::tie(lo, hi) = meta.typed->type_range(part, meta.typed->target_type);
  }
  // -1 marks a node without a label: outside the target type, or (untyped) a node in no
  // split, checked with the splits below.
  const int64_t lowest_label = meta.typed ? 0 : -1;
  for (int64_t i = 0; i < labels.size(); ++i) {
    const bool labelled = meta.ranges[part] + i >= lo && meta.ranges[part] + i < hi;
    PARTITA_CHECK(
        labelled ? labels[i] >= lowest_label && labels[i] < meta.num_classes : labels[i] == -1,
        FormatError, "{}: label {} of row {} {}{}", files.label.path(), labels[i], i,
        labelled ? fmt::format("is outside [0, {}){}", meta.num_classes,
                               meta.typed ? "" : " (or -1: unlabelled)")
                 : std::string("must be -1 (not of the target type)"),
        hint);
  }
  for (const NpyArray* split : {&files.train_idx, &files.valid_idx, &files.test_idx}) {
    const ArrayView<const int64_t> ids = split->view<int64_t>();
    for (int64_t i = 0; i < ids.size(); ++i) {
      PARTITA_CHECK(ids[i] >= lo && ids[i] < hi, FormatError,
                    "{}: id {} at position {} is not owned by part {} (range [{}, {})){}",
                    split->path(), ids[i], i, part, lo, hi, hint);
      PARTITA_CHECK(labels[ids[i] - meta.ranges[part]] >= 0, FormatError,
                    "{}: node {} at position {} has label {} (unlabelled) in {}{}", split->path(),
                    ids[i], i, labels[ids[i] - meta.ranges[part]], files.label.path(), hint);
    }
  }
}

}  // namespace

DistGraph DistGraph::open(const std::string& dir, int rank, int world_size,
                          const DistGraphOptions& options) {
  PARTITA_CHECK(world_size >= 1 && rank >= 0 && rank < world_size, Error,
                "internal: rank {} of {} ranks", rank, world_size);
  DistGraph g;
  g.dir_ = dir;
  g.meta_ = partition::read_meta(dir);
  g.read_edge_meta();
  const int parts = g.meta_.num_parts;
  // One process on a partition of several parts: mpirun or launch was forgotten, most likely.
  if (parts > 1 && world_size == 1)
    throw SingleProcessError(fmt::format("{}: has {} parts (one per rank) but this is a single "
                                         "process; start one rank per part",
                                         dir, parts),
                             parts);
  PARTITA_CHECK(parts == world_size || parts == 1, UsageError,
                "{}: has {} parts but the job has {} ranks; run one rank per part, or "
                "partition into {} parts (one per rank) or 1 part (replicated mode){}",
                dir, parts, world_size, world_size,
                world_size > parts ? fmt::format(", or pass `servers` {} (server-client mode: "
                                                 "{} servers, the other ranks train)",
                                                 parts, parts)
                                   : std::string());
  g.replicated_ = parts == 1 && world_size > 1;
  g.rank_ = rank;
  g.world_size_ = world_size;
  g.map_part(parts == 1 ? 0 : rank, options);
  return g;
}

DistGraph DistGraph::with_servers(const std::string& dir, int rank, int world_size, int servers) {
  PARTITA_CHECK(world_size >= 1 && rank >= 0 && rank < world_size && servers >= 1, Error,
                "internal: rank {} of {} ranks, {} servers", rank, world_size, servers);
  // Counts first: they need no file, so every rank fails the same way.
  const char* plural = servers == 1 ? "" : "s";
  PARTITA_CHECK_PARAM(world_size > servers, "servers",
                      "{} server{}, but the job has {} rank{}, which leaves no rank to train; run "
                      "more ranks than servers (the first {} serve, the others train)",
                      servers, plural, world_size, world_size == 1 ? "" : "s", servers);
  DistGraph g;
  g.dir_ = dir;
  g.meta_ = partition::read_meta(dir);
  g.read_edge_meta();
  const int parts = g.meta_.num_parts;
  PARTITA_CHECK_PARAM(parts > 1, "servers",
                      "{} server{}, but {} has 1 part (replicated mode: every rank maps the whole "
                      "graph, nothing to serve); drop `servers`",
                      servers, plural, dir);
  PARTITA_CHECK_PARAM(parts == servers, "servers",
                      "{} server{}, but {} has {} parts; server-client mode needs one server per "
                      "part (`servers` {})",
                      servers, plural, dir, parts, parts);
  g.rank_ = rank;
  g.world_size_ = world_size;
  return g;
}

DistGraph DistGraph::open_server(const std::string& dir, int rank, int world_size, int servers,
                                 const DistGraphOptions& options) {
  DistGraph g = with_servers(dir, rank, world_size, servers);
  PARTITA_CHECK(rank < servers, Error, "internal: rank {} is not a server ({} servers)", rank,
                servers);
  g.map_part(rank, options);
  return g;
}

DistGraph DistGraph::open_client(const std::string& dir, int rank, int world_size, int servers) {
  DistGraph g = with_servers(dir, rank, world_size, servers);
  PARTITA_CHECK(rank >= servers, Error, "internal: rank {} is a server ({} servers)", rank,
                servers);
  static constexpr int64_t kNoRows[1] = {0};  // indptr of zero rows
  g.client_ = true;
  g.indptr_ = {kNoRows, 1};
  if (g.typed()) {
    g.owned_type_ranges_.assign(static_cast<size_t>(g.meta_.typed->num_types()), {0, 0});
    g.type_features_.assign(static_cast<size_t>(g.meta_.typed->num_types()), nullptr);
  }
  return g;
}

void DistGraph::read_edge_meta() {
  edge_starts_.assign(static_cast<size_t>(meta_.num_parts) + 1, 0);
  for (int p = 0; p < meta_.num_parts; ++p)
    edge_starts_[p + 1] =
        edge_starts_[p] + meta_.file(partition::part_file(p, "indices")).shape.at(0);
  if (has_edge_features()) {
    const partition::FileEntry& f = meta_.file(partition::part_file(0, "edge_feat"));
    edge_feat_dtype_ = f.dtype;
    edge_feat_dim_ = f.shape.size() == 2 ? f.shape[1] : 0;
  }
}

int64_t DistGraph::edge_id_start(int part) const {
  PARTITA_CHECK(part >= 0 && part <= meta_.num_parts, Error, "{}: part {} of {}", dir_, part,
                meta_.num_parts);
  return edge_starts_[static_cast<size_t>(part)];
}

int DistGraph::edge_owner(int64_t edge) const {
  PARTITA_CHECK(edge >= 0 && edge < edge_starts_.back(), Error, "{}: edge id {} is outside [0, {})",
                dir_, edge, edge_starts_.back());
  const int part = static_cast<int>(
      std::upper_bound(edge_starts_.begin(), edge_starts_.end(), edge) - edge_starts_.begin() - 1);
  return replicated_ ? rank_ : part;
}

void DistGraph::map_part(int part, const DistGraphOptions& options) {
  files_ = partition::open_part(dir_, meta_, part);
  check_part(dir_, meta_, part, files_);
  first_ = meta_.ranges[part];
  first_edge_ = edge_starts_[static_cast<size_t>(part)];
  end_ = meta_.ranges[part + 1];
  node_map_ = NpyArray::open(dir_ + "/" + partition::kNodeMapFile);
  node_map_.expect(DType::kInt64, 1);
  PARTITA_CHECK(node_map_.dim(0) == meta_.num_nodes, FormatError,
                "{}/{}: holds {} ids, the partition has {} nodes", dir_, partition::kNodeMapFile,
                node_map_.dim(0), meta_.num_nodes);
  const bool copy = options.in_memory;
  indptr_ = maybe_copy(files_.indptr.view<int64_t>(), copy, &copies_[0], files_.indptr);
  indices_ = maybe_copy(files_.indices.view<int64_t>(), copy, &copies_[1], files_.indices);
  const NpyArray& feat = files_.feat;
  features_ = typed() ? nullptr : feat.data();
  if (copy && !typed()) {
    copies_[2] = HugeBuffer::copy_of(feat.data(), feat.header().data_bytes());
    feat.release_elements(0, feat.num_elements());
    features_ = static_cast<const uint8_t*>(copies_[2].data());
  }
  original_ids_ = maybe_copy(node_map_.view<int64_t>().subview(first_, end_ - first_), copy,
                             &copies_[3], node_map_, first_);
  if (typed()) map_typed(part, copy);
  // The optional arrays (open_part checked dtype and length against partita.json).
  if (has_edge_times())
    edge_times_ =
        maybe_copy(files_.edge_time.view<int64_t>(), copy, &edge_time_copy_, files_.edge_time);
  if (has_edge_weights())
    edge_weights_ =
        maybe_copy(files_.edge_weight.view<float>(), copy, &edge_weight_copy_, files_.edge_weight);
  if (has_node_times()) node_times_ = files_.node_time.view<int64_t>();
  // Read in place (rows gathered by edge id; never used as indices).
  if (has_edge_features()) edge_features_ = files_.edge_feat.data();
  labels_ = files_.label.view<int64_t>();
  train_ids_ = files_.train_idx.view<int64_t>();
  valid_ids_ = files_.valid_idx.view<int64_t>();
  test_ids_ = files_.test_idx.view<int64_t>();
}

void DistGraph::map_typed(int part, bool copy) {
  const partition::TypedMeta& t = *meta_.typed;
  edge_relations_ = maybe_copy(files_.etype.view<int32_t>(), copy, &etype_copy_, files_.etype);
  type_features_.assign(static_cast<size_t>(t.num_types()), nullptr);
  type_feature_copies_.resize(static_cast<size_t>(t.num_types()));
  for (int type = 0; type < t.num_types(); ++type) {
    owned_type_ranges_.push_back(t.type_range(part, type));
    const NpyArray& feat = files_.type_feat[type];
    if (t.node_types[type].feat_dim == 0 || feat.num_elements() == 0) continue;
    type_features_[type] = feat.data();
    if (copy) {
      type_feature_copies_[type] = HugeBuffer::copy_of(feat.data(), feat.header().data_bytes());
      feat.release_elements(0, feat.num_elements());
      type_features_[type] = static_cast<const uint8_t*>(type_feature_copies_[type].data());
    }
  }
}

int DistGraph::node_type(int64_t gid) const {
  PARTITA_CHECK(gid >= 0 && gid < meta_.num_nodes, Error, "{}: node id {} is outside [0, {})", dir_,
                gid, meta_.num_nodes);
  return meta_.node_type(gid);
}

std::pair<int64_t, int64_t> DistGraph::owned_type_range(int type) const {
  PARTITA_CHECK(type >= 0 && type < num_node_types(), Error,
                "{}: node type {} requested, the partition has {}", dir_, type, num_node_types());
  return typed() ? owned_type_ranges_[type] : std::pair<int64_t, int64_t>{first_, end_};
}

const uint8_t* DistGraph::type_features(int type) const {
  PARTITA_CHECK(type >= 0 && type < num_node_types(), Error,
                "{}: node type {} requested, the partition has {}", dir_, type, num_node_types());
  return typed() ? type_features_[type] : features_;
}

int64_t DistGraph::type_feat_dim(int type) const {
  PARTITA_CHECK(type >= 0 && type < num_node_types(), Error,
                "{}: node type {} requested, the partition has {}", dir_, type, num_node_types());
  return typed() ? meta_.typed->node_types[type].feat_dim : meta_.feat_dim;
}

int DistGraph::owner_rank(int64_t gid) const {
  PARTITA_CHECK(gid >= 0 && gid < meta_.num_nodes, FormatError,
                "{}: node id {} is outside [0, {}) (a corrupt part? `partita info {} --verify` "
                "checks every file)",
                dir_, gid, meta_.num_nodes, dir_);
  if (meta_.num_parts == 1) return rank_;
  return meta_.owner(gid);
}

}  // namespace partita::store
