#include "partita/store/dist_graph.h"

#include <algorithm>

#include "partita/core/error.h"

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
void check_part(const std::string& dir, const partition::PartitionMeta& meta, int part,
                const partition::PartFiles& files) {
  const std::string hint = fmt::format(" (`partita info {} --verify` checks every file)", dir);
  const ArrayView<const int64_t> indptr = files.indptr.view<int64_t>();
  const int64_t rows = meta.part_nodes(part), edges = files.indices.num_elements();
  PARTITA_CHECK(indptr[0] == 0, FormatError, "{}: starts at {}, expected 0{}",
                files.indptr.path(), indptr[0], hint);
  for (int64_t i = 0; i < rows; ++i)
    PARTITA_CHECK(indptr[i + 1] >= indptr[i] && indptr[i + 1] <= edges, FormatError,
                  "{}: entry {} = {} is not an offset between {} and the edge count {}{}",
                  files.indptr.path(), i + 1, indptr[i + 1], indptr[i], edges, hint);
  PARTITA_CHECK(indptr[rows] == edges, FormatError, "{}: ends at {}, expected the edge count {}{}",
                files.indptr.path(), indptr[rows], edges, hint);
  const ArrayView<const int64_t> labels = files.label.view<int64_t>();
  for (int64_t i = 0; i < labels.size(); ++i)
    PARTITA_CHECK(labels[i] >= 0 && labels[i] < meta.num_classes, FormatError,
                  "{}: label {} of row {} is outside [0, {}){}", files.label.path(), labels[i], i,
                  meta.num_classes, hint);
  const int64_t lo = meta.ranges[part], hi = meta.ranges[part + 1];
  for (const NpyArray* split : {&files.train_idx, &files.valid_idx, &files.test_idx}) {
    const ArrayView<const int64_t> ids = split->view<int64_t>();
    for (int64_t i = 0; i < ids.size(); ++i)
      PARTITA_CHECK(ids[i] >= lo && ids[i] < hi, FormatError,
                    "{}: id {} at position {} is not owned by part {} (range [{}, {})){}",
                    split->path(), ids[i], i, part, lo, hi, hint);
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
  const int parts = g.meta_.num_parts;
  PARTITA_CHECK(parts == world_size || parts == 1, UsageError,
                "{}: has {} parts but the job has {} ranks; partition into {} parts (one per "
                "rank) or 1 part (replicated mode){}",
                dir, parts, world_size, world_size,
                world_size > parts ? fmt::format(", or pass --servers {} (server-client mode: "
                                                 "{} servers, the other ranks train)",
                                                 parts, parts)
                                   : std::string());
  g.replicated_ = parts == 1 && world_size > 1;
  g.rank_ = rank;
  g.world_size_ = world_size;
  g.map_part(parts == 1 ? 0 : rank, options);
  return g;
}

DistGraph DistGraph::with_servers(const std::string& dir, int rank, int world_size,
                                  int servers) {
  PARTITA_CHECK(world_size >= 1 && rank >= 0 && rank < world_size && servers >= 1, Error,
                "internal: rank {} of {} ranks, {} servers", rank, world_size, servers);
  // Counts first: they need no file, so every rank fails the same way.
  PARTITA_CHECK(world_size > servers, UsageError,
                "--servers {}: the job has {} rank{}, which leaves no rank to train; run more "
                "ranks than servers (the first {} serve, the others train)",
                servers, world_size, world_size == 1 ? "" : "s", servers);
  DistGraph g;
  g.dir_ = dir;
  g.meta_ = partition::read_meta(dir);
  const int parts = g.meta_.num_parts;
  PARTITA_CHECK(parts > 1, UsageError,
                "--servers {}: {} has 1 part (replicated mode: every rank maps the whole graph, "
                "nothing to serve); drop --servers",
                servers, dir);
  PARTITA_CHECK(parts == servers, UsageError,
                "--servers {}: {} has {} parts; server-client mode needs one server per part "
                "(--servers {})",
                servers, dir, parts, parts);
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
  return g;
}

void DistGraph::map_part(int part, const DistGraphOptions& options) {
  files_ = partition::open_part(dir_, meta_, part);
  check_part(dir_, meta_, part, files_);
  first_ = meta_.ranges[part];
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
  features_ = feat.data();
  if (copy) {
    copies_[2] = HugeBuffer::copy_of(feat.data(), feat.header().data_bytes());
    feat.release_elements(0, feat.num_elements());
    features_ = static_cast<const uint8_t*>(copies_[2].data());
  }
  original_ids_ = maybe_copy(node_map_.view<int64_t>().subview(first_, end_ - first_), copy,
                             &copies_[3], node_map_, first_);
  labels_ = files_.label.view<int64_t>();
  train_ids_ = files_.train_idx.view<int64_t>();
  valid_ids_ = files_.valid_idx.view<int64_t>();
  test_ids_ = files_.test_idx.view<int64_t>();
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
