// Writing the arrays of a partition directory, part by part, in bounded memory.
#include "writer.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <future>
#include <system_error>
#include <utility>

#include "partita/core/error.h"
#include "partita/core/half.h"
#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/core/timer.h"

namespace partita::partition {
namespace {

constexpr int64_t kBlockEntries = int64_t{1} << 22;  // 32 MiB of int64 per indices block
constexpr int64_t kBlockBytes = int64_t{32} << 20;   // per features block
constexpr int64_t kRowChunk = 2048;                  // rows per parallel task

class FileCollector {
 public:
  FileCollector(std::string dir, std::vector<FileEntry>* files)
      : dir_(std::move(dir)), files_(files) {}

  // The path of `rel` (relative to the partition directory) to write to.
  std::string full(const std::string& rel) const { return dir_ + "/" + rel; }
  // Records a written file.
  void add(const std::string& rel, DType dtype, std::vector<int64_t> shape, uint32_t crc) {
    files_->push_back({rel, dtype, std::move(shape), crc});
  }
  template <class T>
  void write_vector(const std::string& rel, const std::vector<T>& values) {
    add(rel, dtype_of<T>(), {static_cast<int64_t>(values.size())}, write_npy<T>(full(rel), values));
  }

 private:
  std::string dir_;
  std::vector<FileEntry>* files_;
};

// Ids of a split (sorted original ids) mapped to new ids and bucketed by owner. Because new
// ids increase with original ids inside a part, each bucket comes out sorted.
std::vector<std::vector<int64_t>> bucket_split(const std::vector<int64_t>& ids,
                                               const Renumbering& r) {
  std::vector<std::vector<int64_t>> buckets(static_cast<size_t>(r.num_parts()));
  for (int64_t old : ids) {
    const int64_t id = r.new_id[old];
    const int p = static_cast<int>(std::upper_bound(r.ranges.begin(), r.ranges.end(), id) -
                                   r.ranges.begin()) -
                  1;
    buckets[p].push_back(id);
  }
  return buckets;
}

// Double buffering: the calling threads fill one block while the previous block is written
// (CRC-32 + write, sequential) on a background thread.
template <class T>
class BlockPipeline {
 public:
  explicit BlockPipeline(NpyWriter* writer) : writer_(writer) {}
  ~BlockPipeline() {
    if (pending_.valid()) pending_.wait();
  }
  // The buffer to fill next, at least `count` elements.
  T* buffer(int64_t count) {
    std::vector<T>& b = buffers_[current_];
    if (static_cast<int64_t>(b.size()) < count) b.resize(static_cast<size_t>(count));
    return b.data();
  }
  // Queues the first `count` elements of buffer() for writing.
  void submit(int64_t count) {
    finish();
    const T* data = buffers_[current_].data();
    const size_t bytes = static_cast<size_t>(count) * sizeof(T);
    pending_ = std::async(std::launch::async, [this, data, bytes] { writer_->write(data, bytes); });
    current_ ^= 1;
  }
  // Waits for the queued write; rethrows its error.
  void finish() {
    if (pending_.valid()) pending_.get();
  }

 private:
  NpyWriter* writer_;
  std::vector<T> buffers_[2];
  int current_ = 0;
  std::future<void> pending_;
};

// Keys of the sources: owner part in the high bits, new id in the low ones, so one random
// access per edge gives both the id and its owner.
constexpr int kOwnerShift = 40;
constexpr uint64_t kIdMask = (uint64_t{1} << kOwnerShift) - 1;

std::vector<uint64_t> source_keys(const Renumbering& r) {
  const int64_t n = static_cast<int64_t>(r.node_map.size());
  PARTITA_CHECK(n <= static_cast<int64_t>(kIdMask) && r.num_parts() < (1 << 23), Error,
                "internal: {} nodes in {} parts exceed the writer's key range", n, r.num_parts());
  std::vector<uint64_t> key(static_cast<size_t>(n));
  for (int p = 0; p < r.num_parts(); ++p)
    for (int64_t id = r.ranges[p]; id < r.ranges[p + 1]; ++id)
      key[r.node_map[id]] = (static_cast<uint64_t>(p) << kOwnerShift) | static_cast<uint64_t>(id);
  return key;
}

// Writes row `old` of `in` mapped to new ids at `out`, keeping the input order (ascending
// original ids: the sampler's picks then do not depend on the numbering); returns the
// entries whose source lies outside part p.
template <class Index>
int64_t map_row(const graph::CsrOf<Index>& in, const std::vector<uint64_t>& key, int p, int64_t old,
                int64_t* out) {
  const Index* first = in.indices.data() + in.indptr[old];
  const int64_t length = in.indptr[old + 1] - in.indptr[old];
  int64_t cut = 0;
  for (int64_t k = 0; k < length; ++k) {
    const uint64_t x = key[first[k]];
    cut += static_cast<int>(x >> kOwnerShift) != p ? 1 : 0;
    out[k] = static_cast<int64_t>(x & kIdMask);
  }
  return cut;
}

// The end of the block of rows written at once from `row`: rows [row, end) hold at most
// kBlockEntries entries, or one row if it alone holds more.
int64_t block_end(const std::vector<int64_t>& indptr, int64_t row) {
  const int64_t end =
      std::upper_bound(indptr.begin() + row + 1, indptr.end(), indptr[row] + kBlockEntries) -
      indptr.begin() - 1;
  return std::max(end, row + 1);
}

// indices.npy of part p: row i lists the new ids of the sources of node_map[lo + i], in
// ascending order of their original ids.
// Returns the number of entries whose source is owned by another part.
template <class Index>
int64_t write_indices(const graph::CsrOf<Index>& in, const Renumbering& r,
                      const std::vector<uint64_t>& key, int p, const std::vector<int64_t>& indptr,
                      const std::string& path, int threads, uint32_t* crc) {
  const int64_t lo = r.ranges[p], rows = r.part_nodes(p);
  NpyWriter writer(path, DType::kInt64, {indptr[rows]});
  BlockPipeline<int64_t> pipeline(&writer);
  std::atomic<int64_t> cut{0};
  int64_t row = 0;
  while (row < rows) {
    const int64_t end = block_end(indptr, row);
    const int64_t base = indptr[row], count = indptr[end] - base;
    int64_t* buffer = pipeline.buffer(count);
    parallel_chunks(row, end, kRowChunk, threads, [&](int64_t b, int64_t e) {
      int64_t local_cut = 0;
      for (int64_t i = b; i < e; ++i)
        local_cut += map_row(in, key, p, r.node_map[lo + i], buffer + (indptr[i] - base));
      cut.fetch_add(local_cut, std::memory_order_relaxed);
    });
    pipeline.submit(count);
    row = end;
  }
  pipeline.finish();
  *crc = writer.finish();
  return cut.load();
}

// Features of new ids [first, end) of part p: rows of `f` at node_map[id] - offset, in order,
// i.e. increasing original ids, so the source is read forward; pages behind the pass are
// released (a no-op for owned features). `offset` is the first original id `f` holds (the
// type's offset for per-type features, else 0). Rows are written as `dtype` (a feature
// dtype), narrowed from float32 with rounding to nearest even.
uint32_t write_features(const data::FeatureMatrix& f, const Renumbering& r, int64_t first,
                        int64_t end, int64_t offset, const std::string& path, int threads,
                        DType dtype) {
  const int64_t rows = end - first, cols = f.cols();
  NpyWriter writer(path, dtype, {rows, cols});
  if (cols == 0 || rows == 0) return writer.finish();
  BlockPipeline<uint8_t> pipeline(&writer);
  const size_t row_bytes = static_cast<size_t>(cols) * dtype_size(dtype);
  const int64_t block_rows = std::max<int64_t>(1, kBlockBytes / static_cast<int64_t>(row_bytes));
  int64_t released = 0;  // rows of f below this are released
  for (int64_t row = 0; row < rows; row += block_rows) {
    const int64_t stop = std::min(rows, row + block_rows);
    uint8_t* buffer = pipeline.buffer((stop - row) * static_cast<int64_t>(row_bytes));
    parallel_chunks(row, stop, kRowChunk, threads, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        narrow_floats(f.row(r.node_map[first + i] - offset), cols, dtype,
                      buffer + static_cast<size_t>(i - row) * row_bytes);
    });
    pipeline.submit((stop - row) * static_cast<int64_t>(row_bytes));
    // The rest of this range reads only rows >= node_map[first + stop] - offset.
    const int64_t next = stop < rows ? r.node_map[first + stop] - offset : f.rows();
    if (next > released) {
      f.release_rows(released, next);
      released = next;
    }
  }
  pipeline.finish();
  return writer.finish();
}

// etype.npy of part p: the relation of every entry of its rows (the dataset's edge_relation
// gathered in the order indices.npy lists the entries). Adds each relation's entries to
// `relation_edges`.
uint32_t write_etypes(const data::Dataset& ds, const Renumbering& r, int p,
                      const std::vector<int64_t>& indptr, const std::string& path, int threads,
                      std::vector<int64_t>* relation_edges) {
  const int64_t lo = r.ranges[p], rows = r.part_nodes(p);
  const graph::Csr& in = ds.in_edges;
  NpyWriter writer(path, DType::kInt32, {indptr[rows]});
  BlockPipeline<int32_t> pipeline(&writer);
  int64_t row = 0;
  while (row < rows) {
    const int64_t end = block_end(indptr, row);
    const int64_t base = indptr[row], count = indptr[end] - base;
    int32_t* buffer = pipeline.buffer(count);
    parallel_chunks(row, end, kRowChunk, threads, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t old = r.node_map[lo + i];
        std::copy(ds.edge_relation.begin() + in.indptr[old],
                  ds.edge_relation.begin() + in.indptr[old + 1], buffer + (indptr[i] - base));
      }
    });
    for (int64_t k = 0; k < count; ++k) ++(*relation_edges)[buffer[k]];
    pipeline.submit(count);
    row = end;
  }
  pipeline.finish();
  return writer.finish();
}

// Part p's nodes of each type: [starts[t], starts[t+1]) (new ids). A part lists its nodes in
// increasing original id and original ids are grouped by type, so each type is one range.
std::vector<int64_t> part_type_starts(const data::HeteroSchema& h, const Renumbering& r, int p) {
  std::vector<int64_t> starts(static_cast<size_t>(h.num_types()) + 1);
  const auto first = r.node_map.begin() + r.ranges[p], last = r.node_map.begin() + r.ranges[p + 1];
  for (int t = 0; t < h.num_types(); ++t)
    starts[t] = r.ranges[p] + (std::lower_bound(first, last, h.node_types[t].offset) - first);
  starts[h.num_types()] = r.ranges[p + 1];
  return starts;
}

void make_dir(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  PARTITA_CHECK(!ec, IoError, "{}: cannot create directory: {}", path, ec.message());
}

}  // namespace

std::string part_file(int part, const std::string& name) {
  return fmt::format("part{}/{}.npy", part, name);
}

template <class Index>
WriteResult write_partition_arrays(const data::Dataset& ds, const graph::CsrOf<Index>& in,
                                   const Renumbering& r, const std::string& out_dir, int threads,
                                   DType feature_dtype) {
  WriteResult result;
  FileCollector out(out_dir, &result.files);
  const int num_parts = r.num_parts();
  Stopwatch watch;
  out.write_vector(kNodeMapFile, r.node_map);
  const auto train = bucket_split(ds.train_idx, r);
  const auto valid = bucket_split(ds.valid_idx, r);
  const auto test = bucket_split(ds.test_idx, r);
  const std::vector<uint64_t> key = source_keys(r);
  result.structure_s += watch.seconds();

  result.parts.resize(static_cast<size_t>(num_parts));
  for (int p = 0; p < num_parts; ++p) {
    watch.restart();
    const int64_t lo = r.ranges[p], rows = r.part_nodes(p);
    make_dir(fmt::format("{}/part{}", out_dir, p));
    std::vector<int64_t> indptr(static_cast<size_t>(rows) + 1, 0);
    for (int64_t i = 0; i < rows; ++i) indptr[i + 1] = indptr[i] + in.degree(r.node_map[lo + i]);
    const int64_t edges = indptr[rows];
    out.write_vector(part_file(p, "indptr"), indptr);

    uint32_t crc = 0;
    const std::string indices_rel = part_file(p, "indices");
    result.edge_cut += write_indices(in, r, key, p, indptr, out.full(indices_rel), threads, &crc);
    out.add(indices_rel, DType::kInt64, {edges}, crc);
    result.structure_s += watch.seconds();

    PartStats& s = result.parts[p];
    if (ds.hetero) {
      const data::HeteroSchema& h = *ds.hetero;
      watch.restart();
      s.relation_edges.assign(static_cast<size_t>(h.num_relations()), 0);
      const std::string etype_rel = part_file(p, "etype");
      crc = write_etypes(ds, r, p, indptr, out.full(etype_rel), threads, &s.relation_edges);
      out.add(etype_rel, DType::kInt32, {edges}, crc);
      result.structure_s += watch.seconds();

      watch.restart();
      const std::vector<int64_t> starts = part_type_starts(h, r, p);
      for (int t = 0; t < h.num_types(); ++t) {
        const data::NodeType& type = h.node_types[t];
        s.type_nodes.push_back(starts[t + 1] - starts[t]);
        if (type.feat_dim() == 0) continue;
        const std::string feat_rel = part_file(p, type_feature_name(type.name));
        crc = write_features(type.features, r, starts[t], starts[t + 1], type.offset,
                             out.full(feat_rel), threads, feature_dtype);
        out.add(feat_rel, feature_dtype, {starts[t + 1] - starts[t], type.feat_dim()}, crc);
      }
      result.type_starts.push_back(starts);
      result.features_s += watch.seconds();
    } else {
      watch.restart();
      const std::string feat_rel = part_file(p, "feat");
      crc = write_features(ds.features, r, lo, lo + rows, /*offset=*/0, out.full(feat_rel), threads,
                           feature_dtype);
      out.add(feat_rel, feature_dtype, {rows, ds.features.cols()}, crc);
      result.features_s += watch.seconds();
    }

    watch.restart();
    std::vector<int64_t> label(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) label[i] = ds.labels[r.node_map[lo + i]];
    out.write_vector(part_file(p, "label"), label);
    out.write_vector(part_file(p, "train_idx"), train[p]);
    out.write_vector(part_file(p, "valid_idx"), valid[p]);
    out.write_vector(part_file(p, "test_idx"), test[p]);
    result.structure_s += watch.seconds();

    s.nodes = rows;
    s.edges = edges;
    s.train_nodes = static_cast<int64_t>(train[p].size());
    s.valid_nodes = static_cast<int64_t>(valid[p].size());
    s.test_nodes = static_cast<int64_t>(test[p].size());
    log_info("partition: wrote part {} ({} of {}): {} nodes, {} edges", p, p + 1, num_parts, rows,
             edges);
  }
  return result;
}

template WriteResult write_partition_arrays<int32_t>(const data::Dataset&,
                                                     const graph::CsrOf<int32_t>&,
                                                     const Renumbering&, const std::string&, int,
                                                     DType);
template WriteResult write_partition_arrays<int64_t>(const data::Dataset&,
                                                     const graph::CsrOf<int64_t>&,
                                                     const Renumbering&, const std::string&, int,
                                                     DType);

}  // namespace partita::partition
