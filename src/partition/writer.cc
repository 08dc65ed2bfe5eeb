// Stage 3 of the pipeline (pipeline.h): renumber across ranks, move every node's in-edges,
// label, split ids and feature rows to the rank writing its part, write the partition
// directory, partita.json last (rank 0). One process runs it as the one-rank case: every
// move stays local and the bytes are the same whatever the rank count.
//
// Data moves in rounds of bounded size: each round every rank sends at most
// WriteContext::round_entries in-edges (or round_feature_bytes of feature rows) and the
// writers place what they receive at positions known from PartLayout, so no rank holds a
// whole part, let alone the graph. Every move is one sequence, written once (exchange):
// pack records of one part's rows for that part's writer, alltoall, decode each record and
// write it at its offsets. A rank that fails keeps taking part in the rounds with empty
// messages, and the failure is agreed at the next checkpoint: one error, never a hang.
#include "writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <system_error>

#include "collective.h"
#include "edge_split_steps.h"
#include "layout.h"
#include "npy_file_at.h"
#include "partita/core/directory.h"
#include "partita/core/error.h"
#include "partita/core/half.h"
#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"
#include "partition_meta.h"

namespace partita::partition {
namespace {

const char* const kSplitNames[3] = {"train_idx", "valid_idx", "test_idx"};
constexpr int64_t kRowChunk = 2048;  // feature rows converted per parallel task

// A file of a part this rank writes (part<p>/<name>.npy), open for writing at offsets.
struct OutFile {
  FileEntry entry;  // its CRC once finished
  NpyFileAt file;
};

// The files of a part this rank writes, in partita.json's order: indptr, indices, the edge
// columns, the feature tables (those with features), the node columns; then its split ids.
struct PartOut {
  std::vector<OutFile> files;
  size_t edge_cols = 2, node_cols = 0;  // where the columns start in `files`
  std::vector<int> table_file;          // per table: its file, or -1
};

// A column as the writer reads it: `width` bytes per node or entry from `data`.
struct ColumnIn {
  std::string name;
  DType dtype;
  size_t width;
  const uint8_t* data;
  int64_t dim = 0;  // Column::dim
};

// A feature matrix the parts store: the homogeneous one (type -1), or a node type's,
// whose rows are the original ids [offset, offset + count).
struct Table {
  std::string name;  // feat, feat_<type>
  const data::ShardFeatures* features;
  int type;
  int64_t offset, count;
};

// The largest part's share over the mean (1 when the total is 0).
double imbalance(const std::vector<PartStats>& parts, int64_t PartStats::*count) {
  int64_t total = 0, max = 0;
  for (const PartStats& p : parts) {
    total += p.*count;
    max = std::max(max, p.*count);
  }
  if (total == 0) return 1.0;  // no parts, or nothing counted
  return static_cast<double>(max) * static_cast<double>(parts.size()) / static_cast<double>(total);
}

// Cuts [0, rows) into rounds of at most `limit` weight (one row when it alone weighs more).
template <class Weight>
std::vector<int64_t> round_bounds(int64_t rows, int64_t limit, Weight weight) {
  std::vector<int64_t> bounds{0};
  int64_t acc = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t w = weight(i);
    if (acc > 0 && acc + w > limit) {
      bounds.push_back(i);
      acc = 0;
    }
    acc += w;
  }
  if (rows > 0) bounds.push_back(rows);
  return bounds;
}

// Block rows [a, b) grouped by part (stable: original order inside a part), as runs:
// emit(p, rows, n) for the n rows of part p.
template <class Emit>
void for_each_part_run(const std::vector<int32_t>& part, int64_t a, int64_t b, Emit&& emit) {
  std::vector<int64_t> order(static_cast<size_t>(b - a));
  for (int64_t i = a; i < b; ++i) order[i - a] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return part[x] < part[y]; });
  for (size_t x = 0; x < order.size();) {
    size_t y = x;
    while (y < order.size() && part[order[y]] == part[order[x]]) ++y;
    emit(part[order[x]], order.data() + x, static_cast<int64_t>(y - x));
    x = y;
  }
}

class Writer {
 public:
  Writer(const PartitionInput& input, const std::vector<int32_t>& part, const PartitionOptions& o,
         DistComm& comm, WriteContext context)
      : in_(input),
        shard_(input.shard),
        graph_(input.graph),
        schema_(input.shard.hetero ? &*input.shard.hetero : nullptr),
        part_(part),
        o_(o),
        comm_(comm),
        ctx_(std::move(context)),
        failure_(comm) {
    // Every array beside the structure is a column: the label and etype files too.
    node_cols_.push_back({"label", DType::kInt64, sizeof(int64_t),
                          reinterpret_cast<const uint8_t*>(shard_.labels.data())});
    if (schema_)
      edge_cols_.push_back({"etype", DType::kInt32, sizeof(int32_t),
                            reinterpret_cast<const uint8_t*>(graph_.edge_relation.data())});
    for (const auto& [in, out] : {std::pair{&input.node_columns, &node_cols_},
                                  std::pair{&graph_.edge_columns, &edge_cols_}})
      for (const Column& c : *in)
        out->push_back({c.name, c.dtype, c.width(), c.values.data(), c.dim});
    if (!schema_) tables_.push_back({"feat", &shard_.features, -1, 0, shard_.num_nodes});
    for (int t = 0; schema_ && t < schema_->num_types(); ++t) {
      const data::NodeType& type = schema_->node_types[t];
      tables_.push_back(
          {type_feature_name(type.name), &shard_.type_features[t], t, type.offset, type.count});
    }
  }

  PartitionSummary run();

 private:
  void open_files();
  void move_structure();
  void move_features();
  std::vector<FileEntry> finish_files();
  PartitionMeta describe(std::vector<FileEntry> mine, Phases phases,
                         std::optional<EdgeSplitStats> split);

  // One move: pack(send) fills send[r] with the records for rank r, the ranks exchange
  // them, and decode(reader) reads and writes one record at a time. A failed rank sends and
  // decodes nothing, so the ranks stay in step.
  template <class Pack, class Decode>
  void exchange(Pack&& pack, Decode&& decode) {
    std::vector<std::vector<uint8_t>> send(static_cast<size_t>(comm_.size()));
    failure_.run([&] { pack(send); });
    if (failure_.failed()) send.assign(send.size(), {});
    const std::vector<std::vector<uint8_t>> recv = comm_.alltoall(std::move(send));
    failure_.run([&] {
      for (const auto& message : recv) {
        ByteReader rd(message);
        while (!rd.done()) decode(rd);
      }
    });
  }
  // Runs round(a, b) once per round, for as many rounds as the busiest rank has; [a, b) are
  // this rank's rows of the round (empty once it has none left).
  template <class Round>
  void in_rounds(const std::vector<int64_t>& bounds, Round&& round) {
    const int64_t local = static_cast<int64_t>(bounds.size()) - 1;
    int64_t total = local;
    comm_.allreduce_max(&total, 1);
    for (int64_t k = 0; k < total; ++k) {
      const bool mine = k < local && !failure_.failed();
      round(mine ? bounds[k] : 0, mine ? bounds[k + 1] : 0);
    }
  }
  // The first new id of table t's rows in part p.
  int64_t table_first(size_t t, int p) const {
    return tables_[t].type < 0 ? layout_->ranges()[p] : layout_->type_starts()[p][tables_[t].type];
  }
  std::string out(const std::string& rel) const { return o_.out_dir + "/" + rel; }

  const PartitionInput& in_;
  const data::DatasetShard& shard_;
  const ShardGraph& graph_;
  const data::HeteroSchema* schema_;  // typed: with the relations as stored
  const std::vector<int64_t>* const splits_[3] = {&shard_.train_idx, &shard_.valid_idx,
                                                  &shard_.test_idx};
  const std::vector<int32_t>& part_;
  const PartitionOptions& o_;
  DistComm& comm_;
  WriteContext ctx_;
  int threads_ = resolve_threads(o_.threads);
  RankFailure failure_;
  std::optional<PartLayout> layout_;
  std::vector<ColumnIn> node_cols_, edge_cols_;
  std::vector<Table> tables_;
  std::map<int, PartOut> parts_;  // the parts this rank writes
  std::optional<NpyFileAt> node_map_;
  int64_t edge_cut_ = 0;
  std::vector<int64_t> relation_edges_;  // [P * relations], this rank's entries
};

void Writer::open_files() {
  const PartLayout& L = *layout_;
  agreed(comm_, [&] {
    if (comm_.rank() == 0)
      node_map_.emplace(NpyFileAt::create(out(kNodeMapFile), DType::kInt64, {shard_.num_nodes}));
    for (int p = comm_.rank(); p < o_.num_parts; p += comm_.size()) {
      create_directory(fmt::format("{}/part{}", o_.out_dir, p));
      PartOut& po = parts_[p];
      const int64_t n = L.part_nodes(p), e = L.part_edges(p);
      auto add = [&](const std::string& name, DType dtype, std::vector<int64_t> shape) {
        const std::string rel = part_file(p, name);
        po.files.push_back({{rel, dtype, shape}, NpyFileAt::create(out(rel), dtype, shape)});
        return static_cast<int>(po.files.size()) - 1;
      };
      add("indptr", DType::kInt64, {n + 1});
      const int64_t zero = 0;
      po.files[0].file.write_at(0, &zero, sizeof zero);
      add("indices", DType::kInt64, {e});
      // A column of dim > 0 is a matrix: [count, dim].
      auto shape = [](const ColumnIn& c, int64_t count) {
        return c.dim > 0 ? std::vector<int64_t>{count, c.dim} : std::vector<int64_t>{count};
      };
      for (const ColumnIn& c : edge_cols_) add(c.name, c.dtype, shape(c, e));
      for (size_t t = 0; t < tables_.size(); ++t) {  // a type without features has no file
        const int type = tables_[t].type;
        const int64_t dim = tables_[t].features->dim, first = table_first(t, p);
        const int64_t rows = type < 0 ? n : L.type_starts()[p][type + 1] - first;
        po.table_file.push_back(
            type < 0 || dim > 0 ? add(tables_[t].name, o_.feature_dtype, {rows, dim}) : -1);
      }
      po.node_cols = po.files.size();
      for (const ColumnIn& c : node_cols_) add(c.name, c.dtype, shape(c, n));
      for (int k = 0; k < 3; ++k) add(kSplitNames[k], DType::kInt64, {L.part_split(p, k)});
    }
  });  // node_map.npy.tmp exists from here on
  comm_.reached("write");
  agreed(comm_, [&] {
    if (comm_.rank() != 0)
      node_map_.emplace(NpyFileAt::attach(out(kNodeMapFile), DType::kInt64, {shard_.num_nodes}));
  });
}

// In-edges, node_map and the columns: per round, each rank maps its rows' sources to new ids
// and sends runs of consecutive nodes of one part to that part's writer:
//   [part, first position, first entry, nodes n, entries m]
//   [indptr after each node: n] [original id: n] [sources: m]
//   [each node column: n values] [each edge column: m values]
//   per split (train, valid, test): [its first place, ids k] [k new ids]
// A part's split ids land in its split files after those of the ranks below, in order.
void Writer::move_structure() {
  const PartLayout& L = *layout_;
  const graph::Csr& g = graph_.in_edges;
  const int P = o_.num_parts;
  const int relations = schema_ ? schema_->num_relations() : 0;
  relation_edges_.assign(static_cast<size_t>(P) * relations, 0);
  std::vector<int64_t> edge_cursor(static_cast<size_t>(P));
  for (int p = 0; p < P; ++p) edge_cursor[p] = L.edge_offset(p);
  std::vector<int64_t> split_cursor;  // per (part, split): this rank's next place
  for (int p = 0; p < P; ++p)
    for (int k = 0; k < 3; ++k) split_cursor.push_back(L.split_offset(p, k));
  // Per block row, bit k set when the node is in split k (train, valid, test).
  std::vector<uint8_t> split_bits(part_.size(), 0);
  for (int k = 0; k < 3; ++k)
    for (int64_t id : *splits_[k])
      split_bits[id - shard_.node_begin] |= static_cast<uint8_t>(1u << k);
  std::vector<int64_t> in_split;  // one run's new ids of one split
  const std::vector<int64_t>& new_id = L.block_new_id();
  const std::vector<int64_t> bounds =
      round_bounds(static_cast<int64_t>(part_.size()), ctx_.round_entries,
                   [&](int64_t i) { return g.indptr[i + 1] - g.indptr[i]; });
  in_rounds(bounds, [&](int64_t a, int64_t b) {
    const std::vector<int64_t> mapped = map_sources(
        g.indices.data() + g.indptr[a], g.indptr[b] - g.indptr[a], L, comm_, threads_, failure_);
    const auto pack = [&](std::vector<std::vector<uint8_t>>& send) {
      for_each_part_run(part_, a, b, [&](int p, const int64_t* rows, int64_t n) {
        int64_t m = 0;
        for (int64_t z = 0; z < n; ++z) m += g.degree(rows[z]);
        BytePacker pack(&send[L.writer(p)]);
        pack.put({p, new_id[rows[0]] - L.ranges()[p], edge_cursor[p], n, m});
        // Each reserve() may move the buffer: fill one array before reserving the next.
        auto* indptr = reinterpret_cast<int64_t*>(pack.reserve(n * sizeof(int64_t)));
        for (int64_t z = 0, acc = edge_cursor[p]; z < n; ++z) indptr[z] = acc += g.degree(rows[z]);
        auto* orig = reinterpret_cast<int64_t*>(pack.reserve(n * sizeof(int64_t)));
        for (int64_t z = 0; z < n; ++z) orig[z] = shard_.node_begin + rows[z];
        auto* src = reinterpret_cast<int64_t*>(pack.reserve(m * sizeof(int64_t)));
        for (int64_t z = 0, at = 0; z < n; ++z)
          for (int64_t e = g.indptr[rows[z]]; e < g.indptr[rows[z] + 1]; ++e, ++at) {
            src[at] = mapped[e - g.indptr[a]];
            edge_cut_ += L.owner_part(src[at]) != p ? 1 : 0;
            if (schema_)
              ++relation_edges_[static_cast<size_t>(p) * relations + graph_.edge_relation[e]];
          }
        for (const ColumnIn& c : node_cols_) {
          uint8_t* to = pack.reserve(static_cast<size_t>(n) * c.width);
          for (int64_t z = 0; z < n; ++z)
            std::memcpy(to + z * c.width, c.data + rows[z] * c.width, c.width);
        }
        for (const ColumnIn& c : edge_cols_) {
          uint8_t* to = pack.reserve(static_cast<size_t>(m) * c.width);
          for (int64_t z = 0; z < n; ++z) {
            const int64_t e = g.indptr[rows[z]], count = g.degree(rows[z]);
            std::memcpy(to, c.data + e * c.width, count * c.width);
            to += count * c.width;
          }
        }
        for (int k = 0; k < 3; ++k) {
          in_split.clear();
          for (int64_t z = 0; z < n; ++z)
            if ((split_bits[rows[z]] >> k) & 1) in_split.push_back(new_id[rows[z]]);
          int64_t& at = split_cursor[static_cast<size_t>(p) * 3 + k];
          pack.put({at, static_cast<int64_t>(in_split.size())});
          pack.put(in_split.data(), in_split.size());
          at += static_cast<int64_t>(in_split.size());
        }
        edge_cursor[p] += m;
      });
    };
    exchange(pack, [&](ByteReader& rd) {
      const int p = static_cast<int>(rd.get());
      const int64_t pos = rd.get(), first = rd.get(), n = rd.get(), m = rd.get();
      PartOut& po = parts_.at(p);
      // The next `count` values of `width` bytes, written at value `at` of `file`.
      auto put = [&](NpyFileAt& file, int64_t at, int64_t count, size_t width) {
        file.write_at(at * width, rd.take(count * width), count * width);
      };
      put(po.files[0].file, pos + 1, n, 8);
      put(*node_map_, L.ranges()[p] + pos, n, 8);
      put(po.files[1].file, first, m, 8);
      for (size_t c = 0; c < node_cols_.size(); ++c)
        put(po.files[po.node_cols + c].file, pos, n, node_cols_[c].width);
      for (size_t c = 0; c < edge_cols_.size(); ++c)
        put(po.files[po.edge_cols + c].file, first, m, edge_cols_[c].width);
      for (size_t k = 0; k < 3; ++k) {  // the split files come last
        const int64_t at = rd.get(), count = rd.get();
        put(po.files[po.files.size() - 3 + k].file, at, count, 8);
      }
    });
  });
}

// Feature rows: per round, each rank reads a slice of its block's rows (stored dtype),
// converts them to the output dtype (widen to float32, narrow with rounding to nearest
// even) and sends runs of consecutive rows of one (part, table) to the part's writer:
// [part, table, first row, rows k] [k * row bytes].
void Writer::move_features() {
  const PartLayout& L = *layout_;
  const size_t out_size = dtype_size(o_.feature_dtype);
  // The table of block row i.
  auto table_of = [&](int64_t i) {
    return schema_ ? static_cast<size_t>(schema_->type_of(shard_.node_begin + i)) : 0;
  };
  const std::vector<int64_t> bounds =
      round_bounds(static_cast<int64_t>(part_.size()), ctx_.round_feature_bytes, [&](int64_t i) {
        const data::ShardFeatures& f = *tables_[table_of(i)].features;
        return std::max<int64_t>(1, f.dim * static_cast<int64_t>(dtype_size(f.dtype) + out_size));
      });
  const std::vector<int64_t>& new_id = L.block_new_id();
  std::vector<uint8_t> stored;
  in_rounds(bounds, [&](int64_t a, int64_t b) {
    const auto pack = [&](std::vector<std::vector<uint8_t>>& send) {
      for (int64_t s = a, e = a; s < b; s = e) {  // one segment [s, e) per table in [a, b)
        const size_t t = table_of(s);
        const Table& table = tables_[t];
        const data::ShardFeatures& f = *table.features;
        e = std::min(b, table.offset + table.count - shard_.node_begin);
        if (f.dim == 0) continue;
        const size_t in_row = static_cast<size_t>(f.dim) * dtype_size(f.dtype);
        const size_t out_row = static_cast<size_t>(f.dim) * out_size;
        stored.resize(static_cast<size_t>(e - s) * in_row);
        const int64_t first_row = shard_.node_begin + s - table.offset;
        f.read(first_row, first_row + (e - s), stored.data());
        for_each_part_run(part_, s, e, [&](int p, const int64_t* rows, int64_t n) {
          BytePacker pack(&send[L.writer(p)]);
          pack.put({p, static_cast<int64_t>(t), new_id[rows[0]] - table_first(t, p), n});
          uint8_t* dst = pack.reserve(static_cast<size_t>(n) * out_row);
          parallel_chunks(0, n, kRowChunk, threads_, [&](int64_t lo, int64_t hi) {
            std::vector<float> wide(static_cast<size_t>(f.dim));
            for (int64_t z = lo; z < hi; ++z) {
              const uint8_t* src = stored.data() + static_cast<size_t>(rows[z] - s) * in_row;
              const float* row = reinterpret_cast<const float*>(src);
              // float32 rows are read in place where aligned, else copied (widening copies).
              if (f.dtype != DType::kFloat32 ||
                  reinterpret_cast<uintptr_t>(src) % alignof(float) != 0) {
                widen_to_floats(src, f.dim, f.dtype, wide.data());
                row = wide.data();
              }
              narrow_floats(row, f.dim, o_.feature_dtype, dst + z * out_row);
            }
          });
        });
      }
    };
    exchange(pack, [&](ByteReader& rd) {
      const int p = static_cast<int>(rd.get());
      const size_t t = static_cast<size_t>(rd.get());
      const int64_t first = rd.get(), n = rd.get();
      const size_t row_bytes = static_cast<size_t>(tables_[t].features->dim) * out_size;
      PartOut& po = parts_.at(p);
      po.files[po.table_file[t]].file.write_at(first * static_cast<int64_t>(row_bytes),
                                               rd.take(n * row_bytes), n * row_bytes);
    });
  });
}

// Closes every file, then the creators finish theirs (CRC, rename). Returns this rank's
// file entries.
std::vector<FileEntry> Writer::finish_files() {
  std::vector<FileEntry> files;
  agreed(comm_, [&] {
    if (comm_.rank() != 0 && node_map_) node_map_->close();
  });  // every rank's node_map rows are on disk
  agreed(comm_, [&] {
    if (comm_.rank() == 0)
      files.push_back({kNodeMapFile, DType::kInt64, {shard_.num_nodes}, node_map_->finish()});
    for (auto& part : parts_)
      for (OutFile& f : part.second.files) {
        f.entry.crc32 = f.file.finish();
        files.push_back(f.entry);
      }
  });
  return files;
}

// The metadata every rank agrees on: the options' settings, the dataset's counts and schema
// (typed: relations as stored), the files (node_map.npy, each part's in PartOut's order,
// the edge split's), cut, per-part and per-relation figures; the summary's totals, cut
// fraction and imbalances (max / mean), and every rank's peak RSS.
PartitionMeta Writer::describe(std::vector<FileEntry> mine, Phases phases,
                               std::optional<EdgeSplitStats> split) {
  const PartLayout& L = *layout_;
  PartitionMeta meta;
  meta.num_parts = o_.num_parts;
  meta.num_nodes = shard_.num_nodes;
  meta.feat_dim = schema_ ? 0 : shard_.features.dim;
  meta.feature_dtype = o_.feature_dtype;
  meta.num_classes = shard_.num_classes;
  meta.ranges = L.ranges();
  meta.method = method_name(o_.method);
  meta.seed = o_.seed;
  meta.balance_train = o_.balance_train;
  meta.balance_edges = o_.balance_edges;
  meta.undirected = o_.undirected;
  meta.dataset = shard_.path;
  const std::string text = files_to_json(mine);
  for (const auto& theirs : comm_.allgather({text.begin(), text.end()})) {
    const std::vector<FileEntry> files = files_from_json({theirs.begin(), theirs.end()}, "files");
    meta.files.insert(meta.files.end(), files.begin(), files.end());
  }
  PartitionSummary& s = meta.summary;
  s.edge_cut = sum_over_ranks({edge_cut_}, comm_)[0];
  const std::vector<int64_t> relation_edges = sum_over_ranks(relation_edges_, comm_);
  const int rels = schema_ ? schema_->num_relations() : 0;
  for (int p = 0; p < o_.num_parts; ++p) {
    const auto relations = relation_edges.begin() + static_cast<ptrdiff_t>(p) * rels;
    PartStats& ps = s.parts.emplace_back();
    ps.nodes = L.part_nodes(p);
    ps.edges = L.part_edges(p);
    for (int k = 0; k < 3; ++k) ps.*kPartCounts[2 + k].second = L.part_split(p, k);
    ps.relation_edges.assign(relations, relations + rels);
    for (int t = 0; schema_ && t < schema_->num_types(); ++t)
      ps.type_nodes.push_back(L.type_starts()[p][t + 1] - L.type_starts()[p][t]);
    s.num_nodes += ps.nodes;
    s.num_edges += ps.edges;
  }
  if (schema_) {
    // The schema, each type's feature width, the relations' totals over the parts.
    TypedMeta& m = meta.typed.emplace();
    for (int t = 0; t < schema_->num_types(); ++t) {
      const data::NodeType& type = schema_->node_types[t];
      m.node_types.push_back({type.name, type.count, shard_.type_features.at(t).dim, type.offset});
      s.type_names.push_back(type.name);
    }
    for (int r = 0; r < rels; ++r) {
      const data::Relation& rel = schema_->relations[r];
      int64_t edges = 0;
      for (const PartStats& ps : s.parts) edges += ps.relation_edges[r];
      m.relations.push_back({rel.name, rel.src_type, rel.dst_type, edges, rel.reverse});
      s.relation_names.push_back(m.triplet(r));
    }
    m.target_type = schema_->target_type;
    m.reverse_relations = std::any_of(schema_->relations.begin(), schema_->relations.end(),
                                      [](const data::Relation& r) { return r.reverse; });
    m.type_starts = L.type_starts();
  }
  meta.num_edges = s.num_edges;
  s.edge_cut_fraction = s.num_edges > 0 ? static_cast<double>(s.edge_cut) / s.num_edges : 0.0;
  s.node_imbalance = imbalance(s.parts, &PartStats::nodes);
  s.edge_imbalance = imbalance(s.parts, &PartStats::edges);
  s.train_imbalance = imbalance(s.parts, &PartStats::train_nodes);
  // Microseconds are plenty, and keep partita.json readable.
  for (auto& phase : phases) phase.second = std::round(phase.second * 1e6) / 1e6;
  s.phase_seconds = std::move(phases);
  s.edge_split = std::move(split);
  // Peaks last: every rank's, after all its work (listed per rank on several ranks).
  for (const std::vector<int64_t>& peak : gather_ints({peak_rss_bytes()}, comm_)) {
    s.peak_rss_bytes = std::max(s.peak_rss_bytes, peak[0]);
    if (comm_.size() > 1) s.rank_peak_rss_bytes.push_back(peak[0]);
  }
  return meta;
}

PartitionSummary Writer::run() {
  Stopwatch watch;
  Phases phases = std::move(ctx_.phases);
  agreed(comm_, [&] {
    PARTITA_CHECK_PARAM((!o_.edge_split.enabled() && !shard_.edge_split) || ctx_.edge_split,
                        "edge_split",
                        "the link-prediction split of {} is made before assignment: partition "
                        "it with run_partition",
                        shard_.path);
    PARTITA_CHECK(graph_.num_nodes == shard_.num_nodes && graph_.node_begin == shard_.node_begin &&
                      graph_.node_end == shard_.node_end &&
                      graph_.in_edges.num_rows() == shard_.node_end - shard_.node_begin,
                  Error, "internal: the shard graph's block [{}, {}) of {} is not the shard's",
                  graph_.node_begin, graph_.node_end, graph_.num_nodes);
    const int64_t rows = shard_.node_end - shard_.node_begin;
    PARTITA_CHECK_PARAM(static_cast<int64_t>(part_.size()) == rows, "part",
                        "{} entries for {} nodes", part_.size(), rows);
    for (size_t i = 0; i < part_.size(); ++i)
      PARTITA_CHECK_PARAM(part_[i] >= 0 && part_[i] < o_.num_parts, "part",
                          "node {} is assigned to part {}, outside [0, {})",
                          shard_.node_begin + static_cast<int64_t>(i), part_[i], o_.num_parts);
    for (const auto& [cols, count] :
         {std::pair{&in_.node_columns, rows},
          std::pair{&graph_.edge_columns, graph_.in_edges.num_entries()}})
      for (const Column& c : *cols)
        PARTITA_CHECK(c.values.size() == static_cast<size_t>(count) * c.width(), Error,
                      "internal: column {} holds {} bytes for {} values", c.name, c.values.size(),
                      count);
  });
  // The output directory, made ready on rank 0 before anything is written: created, and until
  // the new partita.json lands it must not look like a partition (the old one is removed).
  agreed(comm_, [&] {
    if (comm_.rank() != 0) return;
    create_directory(o_.out_dir);
    std::error_code ec;
    std::filesystem::remove(o_.out_dir + "/" + kMetaFileName, ec);
    PARTITA_CHECK(!ec, IoError, "{}/{}: cannot remove the old metadata: {}", o_.out_dir,
                  kMetaFileName, ec.message());
  });
  layout_.emplace(shard_.node_begin, part_, graph_.in_edges, splits_, o_.num_parts, schema_, comm_);
  phases.emplace_back("renumber", watch.seconds());
  if (comm_.rank() == 0)
    log_info("partition: writing {} parts to {}{}", o_.num_parts, o_.out_dir,
             comm_.size() > 1 ? fmt::format(" from {} ranks", comm_.size()) : std::string());

  watch.restart();
  open_files();
  move_structure();
  failure_.agree();
  phases.emplace_back("write_structure", watch.seconds());
  watch.restart();
  move_features();
  failure_.agree();
  phases.emplace_back("write_features", watch.seconds());
  watch.restart();
  std::vector<FileEntry> mine = finish_files();
  phases.emplace_back("write_splits", watch.seconds());
  std::optional<EdgeSplitStats> split;
  if (ctx_.edge_split) {
    watch.restart();
    split = write_edge_split(*ctx_.edge_split, *layout_, o_.out_dir, comm_, threads_, &mine);
    phases.emplace_back("write_edge_split", watch.seconds());
  }
  PartitionMeta meta = describe(std::move(mine), std::move(phases), std::move(split));
  agreed(comm_, [&] {
    if (comm_.rank() != 0) return;
    warn_about_parts(meta.summary, o_);
    write_meta(o_.out_dir, meta);
  });
  return meta.summary;
}

}  // namespace

PartitionSummary write_partition(const PartitionInput& input, const std::vector<int32_t>& part,
                                 const PartitionOptions& options, DistComm& comm,
                                 WriteContext context) {
  return Writer(input, part, options, comm, std::move(context)).run();
}

PartitionSummary write_partition(const PartitionInput& input, const std::vector<int32_t>& part,
                                 const PartitionOptions& options, DistComm& comm) {
  return write_partition(input, part, options, comm, WriteContext{});
}

}  // namespace partita::partition
