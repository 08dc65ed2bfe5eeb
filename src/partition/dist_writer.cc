// Stage 3 of the distributed pipeline: renumber across ranks, move every node's in-edges,
// label, split ids and feature rows to the rank writing its part, write the partition
// directory, partita.json last (rank 0).
//
// Data moves in rounds of bounded size: each round every rank sends at most
// DistWriteContext::round_entries in-edges (or round_feature_bytes of feature rows) and the writers
// place what they receive at positions known from DistLayout, so no rank holds a whole part, let
// alone the graph. A rank that fails keeps taking part in the rounds with empty messages, and the
// failure is agreed at the next checkpoint: the job ends with one error, never a hang.
#include "dist_writer.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <system_error>

#include "byte_pack.h"
#include "dist_edge_split.h"
#include "dist_layout.h"
#include "kill_hook.h"
#include "npy_file_at.h"
#include "partita/core/error.h"
#include "partita/core/half.h"
#include "partita/core/log.h"
#include "partita/core/parallel.h"
#include "partita/core/parameter_error.h"
#include "partita/core/timer.h"
#include "typed_dataset.h"

namespace partita::partition {
namespace {

// The first failure of this rank; later work is skipped, collectives still run.
class RankFailure {
 public:
  template <class F>
  void run(F&& f) {
    if (!text_.empty()) return;
    try {
      f();
    } catch (const std::exception& e) {
      text_ = e.what();
      if (text_.empty()) text_ = "unknown failure";
    }
  }
  bool failed() const { return !text_.empty(); }
  // Checkpoint: throws on every rank when any rank failed.
  void agree(DistComm& comm) const { comm.agree(text_); }

 private:
  std::string text_;
};

std::vector<int64_t> gather_sum(DistComm& comm, std::vector<int64_t> values) {
  if (!values.empty()) comm.allreduce_sum(values.data(), values.size());
  return values;
}

// The files of the parts this rank writes, open for writing at offsets.
struct PartOut {
  std::optional<NpyFileAt> indptr, indices, etype, label;
  std::vector<std::optional<NpyFileAt>> feat;  // homogeneous: [0]; typed: per type
  std::vector<int64_t> split[3];               // train, valid, test new ids
};

const char* const kSplitNames[3] = {"train_idx", "valid_idx", "test_idx"};

// The schema of the written graph: the shard's input relations, plus their reverses when
// stage 1 added them (data/hetero.h's convention).
// Node types without features (HeteroSchema is move-only; the shard's holds none anyway).
data::HeteroSchema written_schema(const data::HeteroSchema& input, bool reverse) {
  data::HeteroSchema h;
  for (const data::NodeType& t : input.node_types) {
    h.node_types.emplace_back();
    h.node_types.back().name = t.name;
    h.node_types.back().count = t.count;
    h.node_types.back().offset = t.offset;
  }
  h.relations = input.relations;
  h.target_type = input.target_type;
  if (reverse) {
    const int inputs = input.num_relations();
    for (int r = 0; r < inputs; ++r) {
      data::Relation rev = input.relations[r];
      rev.name = "rev_" + rev.name;
      std::swap(rev.src_type, rev.dst_type);
      rev.reverse = true;
      h.relations.push_back(rev);
    }
  }
  return h;
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

// Block rows [a, b) grouped by part (stable: original order inside a part).
std::vector<int64_t> rows_by_part(const std::vector<int32_t>& part, int64_t a, int64_t b) {
  std::vector<int64_t> order(static_cast<size_t>(b - a));
  for (int64_t i = a; i < b; ++i) order[i - a] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return part[x] < part[y]; });
  return order;
}

void serialize_files(const std::vector<FileEntry>& files, std::vector<uint8_t>* out) {
  BytePacker pack(out);
  pack.put(static_cast<int64_t>(files.size()));
  for (const FileEntry& f : files) {
    pack.put(static_cast<int64_t>(f.path.size()));
    pack.put_bytes(f.path.data(), f.path.size());
    pack.put(static_cast<int64_t>(f.dtype));
    pack.put(static_cast<int64_t>(f.shape.size()));
    pack.put_array(f.shape.data(), static_cast<int64_t>(f.shape.size()));
    pack.put(static_cast<int64_t>(f.crc32));
  }
}

void deserialize_files(const std::vector<uint8_t>& in, std::vector<FileEntry>* files) {
  ByteReader rd(in);
  const int64_t count = rd.get();
  for (int64_t k = 0; k < count; ++k) {
    FileEntry f;
    const int64_t len = rd.get();
    const uint8_t* p = rd.take(static_cast<size_t>(len));
    f.path.assign(reinterpret_cast<const char*>(p), static_cast<size_t>(len));
    f.dtype = static_cast<DType>(rd.get());
    f.shape.resize(static_cast<size_t>(rd.get()));
    for (int64_t& s : f.shape) s = rd.get();
    f.crc32 = static_cast<uint32_t>(rd.get());
    files->push_back(std::move(f));
  }
}

class DistWriter {
 public:
  DistWriter(const data::DatasetShard& shard, const ShardGraph& graph,
             const std::vector<int32_t>& part, const PartitionOptions& o, DistComm& comm,
             DistWriteContext context)
      : shard_(shard), graph_(graph), part_(part), o_(o), comm_(comm), ctx_(std::move(context)) {}

  PartitionSummary run();

 private:
  void check_inputs();
  void prepare_directories();
  void open_files();
  void move_structure();
  void move_features();
  void move_splits();
  std::vector<FileEntry> finish_files();
  int64_t rounds(int64_t local) {
    int64_t n = local;
    comm_.allreduce_max(&n, 1);
    return n;
  }
  const data::ShardFeatures& features_of(int type) const {
    return type < 0 ? shard_.features : shard_.type_features[type];
  }
  std::string out(const std::string& rel) const { return o_.out_dir + "/" + rel; }

  const data::DatasetShard& shard_;
  const ShardGraph& graph_;
  const std::vector<int32_t>& part_;
  const PartitionOptions& o_;
  DistComm& comm_;
  DistWriteContext ctx_;
  int threads_ = resolve_threads(o_.threads);
  RankFailure failure_;
  std::optional<data::HeteroSchema> schema_;  // typed: with the reverse relations
  std::optional<DistLayout> layout_;
  std::map<int, PartOut> parts_;  // the parts this rank writes
  std::optional<NpyFileAt> node_map_;
  int64_t edge_cut_ = 0;
  std::vector<int64_t> relation_edges_;  // [P * relations], this rank's entries
  std::vector<int64_t> split_counts_;    // [P * 3], this rank's split ids
};

void DistWriter::check_inputs() {
  failure_.run([&] {
    const int64_t n = shard_.num_nodes;
    PARTITA_CHECK_PARAM(o_.num_parts >= 1 && o_.num_parts <= (1 << 20), "num_parts",
                        "must be in [1, {}], got {}", 1 << 20, o_.num_parts);
    PARTITA_CHECK_PARAM(o_.num_parts <= n, "num_parts",
                        "{} parts requested but {} has only {} nodes", o_.num_parts, shard_.path,
                        n);
    PARTITA_CHECK_PARAM(!o_.out_dir.empty(), "out_dir", "an output directory is required");
    PARTITA_CHECK_PARAM((!o_.edge_split.enabled() && !shard_.edge_split) || ctx_.edge_split,
                        "edge_split",
                        "the link-prediction split of {} is made before assignment: partition "
                        "it with run_partition_distributed",
                        shard_.path);
    PARTITA_CHECK(graph_.num_nodes == n && graph_.node_begin == shard_.node_begin &&
                      graph_.node_end == shard_.node_end &&
                      graph_.in_edges.num_rows() == shard_.node_end - shard_.node_begin,
                  Error, "internal: the shard graph's block [{}, {}) of {} is not the shard's",
                  graph_.node_begin, graph_.node_end, graph_.num_nodes);
    const int64_t rows = shard_.node_end - shard_.node_begin;
    PARTITA_CHECK_PARAM(static_cast<int64_t>(part_.size()) == rows, "part",
                        "{} entries for a block of {} nodes", part_.size(), rows);
    for (size_t i = 0; i < part_.size(); ++i)
      PARTITA_CHECK_PARAM(part_[i] >= 0 && part_[i] < o_.num_parts, "part",
                          "node {} is assigned to part {}, outside [0, {})",
                          shard_.node_begin + static_cast<int64_t>(i), part_[i], o_.num_parts);
    PARTITA_CHECK(static_cast<int64_t>(shard_.labels.size()) == rows, Error,
                  "internal: {} labels for a block of {} nodes", shard_.labels.size(), rows);
    if (shard_.hetero) {
      PARTITA_CHECK(static_cast<int>(shard_.type_features.size()) == shard_.hetero->num_types(),
                    Error, "internal: {} feature readers for {} node types",
                    shard_.type_features.size(), shard_.hetero->num_types());
      PARTITA_CHECK(graph_.edge_relation.size() == graph_.in_edges.indices.size(), Error,
                    "internal: {} relations for {} entries", graph_.edge_relation.size(),
                    graph_.in_edges.indices.size());
    }
  });
  failure_.agree(comm_);
  if (shard_.hetero) {
    int64_t max_relation = -1;
    for (int32_t r : graph_.edge_relation) max_relation = std::max<int64_t>(max_relation, r);
    comm_.allreduce_max(&max_relation, 1);
    const int inputs = shard_.hetero->num_relations();
    const bool reverse = ctx_.reverse_relations.value_or(max_relation >= inputs);
    schema_ = written_schema(*shard_.hetero, reverse);
    failure_.run([&] {
      PARTITA_CHECK(max_relation < schema_->num_relations(), Error,
                    "internal: relation id {} of {} relations", max_relation,
                    schema_->num_relations());
    });
    failure_.agree(comm_);
  }
}

void DistWriter::prepare_directories() {
  failure_.run([&] {
    std::error_code ec;
    std::filesystem::create_directories(o_.out_dir, ec);
    PARTITA_CHECK(!ec, IoError, "{}: cannot create directory: {}", o_.out_dir, ec.message());
    if (comm_.rank() == 0) {
      // Until the new partita.json lands, the directory must not look like a partition.
      std::filesystem::remove(out(kMetaFileName), ec);
      PARTITA_CHECK(!ec, IoError, "{}: cannot remove the old metadata: {}", out(kMetaFileName),
                    ec.message());
    }
  });
  failure_.agree(comm_);
}

void DistWriter::open_files() {
  const DistLayout& L = *layout_;
  failure_.run([&] {
    if (comm_.rank() == 0)
      node_map_ = NpyFileAt::create(out(kNodeMapFile), DType::kInt64, {shard_.num_nodes});
    for (int p = comm_.rank(); p < o_.num_parts; p += comm_.size()) {
      std::error_code ec;
      const std::string dir = fmt::format("{}/part{}", o_.out_dir, p);
      std::filesystem::create_directories(dir, ec);
      PARTITA_CHECK(!ec, IoError, "{}: cannot create directory: {}", dir, ec.message());
      PartOut& po = parts_[p];
      const int64_t n = L.part_nodes(p), e = L.part_edges(p);
      po.indptr = NpyFileAt::create(out(part_file(p, "indptr")), DType::kInt64, {n + 1});
      const int64_t zero = 0;
      po.indptr->write_elements<int64_t>(0, &zero, 1);
      po.indices = NpyFileAt::create(out(part_file(p, "indices")), DType::kInt64, {e});
      if (schema_) po.etype = NpyFileAt::create(out(part_file(p, "etype")), DType::kInt32, {e});
      if (schema_) {
        for (int t = 0; t < schema_->num_types(); ++t) {
          po.feat.emplace_back();
          const int64_t dim = shard_.type_features[t].dim;
          if (dim == 0) continue;
          const std::vector<int64_t>& s = L.type_starts()[p];
          po.feat.back() =
              NpyFileAt::create(out(part_file(p, type_feature_name(schema_->node_types[t].name))),
                                o_.feature_dtype, {s[t + 1] - s[t], dim});
        }
      } else {
        po.feat.emplace_back(NpyFileAt::create(out(part_file(p, "feat")), o_.feature_dtype,
                                               {n, shard_.features.dim}));
      }
      po.label = NpyFileAt::create(out(part_file(p, "label")), DType::kInt64, {n});
    }
  });
  failure_.agree(comm_);  // node_map.npy.tmp exists from here on
  kill_if_asked("write", comm_.rank());
  failure_.run([&] {
    if (comm_.rank() != 0)
      node_map_ = NpyFileAt::attach(out(kNodeMapFile), DType::kInt64, {shard_.num_nodes});
  });
  failure_.agree(comm_);
}

// In-edges, labels and node_map: per round, each rank maps its rows' sources to new ids and
// sends runs of consecutive nodes of one part to that part's writer:
//   [part, first position, first entry, nodes n, entries m]
//   [indptr after each node: n] [label: n] [original id: n] [sources: m] ([relation: m])
void DistWriter::move_structure() {
  const DistLayout& L = *layout_;
  const graph::Csr& g = graph_.in_edges;
  const int R = comm_.size(), me = comm_.rank(), P = o_.num_parts;
  const int64_t rows = static_cast<int64_t>(part_.size());
  const bool typed = schema_.has_value();
  const int relations = typed ? schema_->num_relations() : 0;
  relation_edges_.assign(static_cast<size_t>(P) * relations, 0);
  const std::vector<int64_t> bounds = round_bounds(
      rows, ctx_.round_entries, [&](int64_t i) { return g.indptr[i + 1] - g.indptr[i]; });
  const int64_t local_rounds = static_cast<int64_t>(bounds.size()) - 1;
  const int64_t total_rounds = rounds(local_rounds);
  std::vector<int64_t> edge_cursor(static_cast<size_t>(P));
  for (int p = 0; p < P; ++p) edge_cursor[p] = L.edge_offset(me, p);
  const std::vector<int64_t>& new_id = L.block_new_id();

  for (int64_t k = 0; k < total_rounds; ++k) {
    const bool mine = k < local_rounds && !failure_.failed();
    const int64_t a = mine ? bounds[k] : 0, b = mine ? bounds[k + 1] : 0;
    std::vector<int64_t> mapped;
    std::string map_error;
    try {
      mapped = map_sources(g, g.indptr[a], g.indptr[b], L, shard_.node_begin, comm_, threads_);
    } catch (const std::exception& e) {
      map_error = e.what();
    }
    std::vector<std::vector<uint8_t>> send(static_cast<size_t>(R));
    failure_.run([&] {
      PARTITA_CHECK(map_error.empty(), Error, "{}", map_error);
      const int64_t base = g.indptr[a];
      const std::vector<int64_t> order = rows_by_part(part_, a, b);
      for (size_t x = 0; x < order.size();) {
        const int p = part_[order[x]];
        size_t y = x;
        int64_t m = 0;
        while (y < order.size() && part_[order[y]] == p) m += g.degree(order[y++]);
        const int64_t n = static_cast<int64_t>(y - x);
        BytePacker pack(&send[L.writer(p)]);
        pack.put(p);
        pack.put(new_id[order[x]] - L.ranges()[p]);
        pack.put(edge_cursor[p]);
        pack.put(n);
        pack.put(m);
        // Each reserve() may move the buffer: fill one array before reserving the next.
        auto* indptr = reinterpret_cast<int64_t*>(pack.reserve(n * sizeof(int64_t)));
        int64_t acc = edge_cursor[p];
        for (size_t z = x; z < y; ++z) indptr[z - x] = acc += g.degree(order[z]);
        auto* label = reinterpret_cast<int64_t*>(pack.reserve(n * sizeof(int64_t)));
        for (size_t z = x; z < y; ++z) label[z - x] = shard_.labels[order[z]];
        auto* orig = reinterpret_cast<int64_t*>(pack.reserve(n * sizeof(int64_t)));
        for (size_t z = x; z < y; ++z) orig[z - x] = shard_.node_begin + order[z];
        auto* src = reinterpret_cast<int64_t*>(pack.reserve(m * sizeof(int64_t)));
        int64_t at = 0;
        for (size_t z = x; z < y; ++z) {
          for (int64_t e = g.indptr[order[z]]; e < g.indptr[order[z] + 1]; ++e, ++at) {
            src[at] = mapped[e - base];
            edge_cut_ += L.owner_part(src[at]) != p ? 1 : 0;
          }
        }
        if (typed) {
          auto* rel = reinterpret_cast<int32_t*>(pack.reserve(m * sizeof(int32_t)));
          at = 0;
          for (size_t z = x; z < y; ++z) {
            for (int64_t e = g.indptr[order[z]]; e < g.indptr[order[z] + 1]; ++e, ++at) {
              rel[at] = graph_.edge_relation[e];
              ++relation_edges_[static_cast<size_t>(p) * relations + rel[at]];
            }
          }
        }
        edge_cursor[p] += m;
        x = y;
      }
    });
    if (failure_.failed()) send.assign(static_cast<size_t>(R), {});
    const std::vector<std::vector<uint8_t>> recv = comm_.alltoall(std::move(send));
    failure_.run([&] {
      for (const auto& message : recv) {
        ByteReader rd(message);
        while (!rd.done()) {
          const int p = static_cast<int>(rd.get());
          const int64_t pos = rd.get(), first = rd.get(), n = rd.get(), m = rd.get();
          PartOut& po = parts_.at(p);
          po.indptr->write_at((pos + 1) * 8, rd.take(n * 8), n * 8);
          po.label->write_at(pos * 8, rd.take(n * 8), n * 8);
          node_map_->write_at((L.ranges()[p] + pos) * 8, rd.take(n * 8), n * 8);
          po.indices->write_at(first * 8, rd.take(m * 8), m * 8);
          if (typed) po.etype->write_at(first * 4, rd.take(m * 4), m * 4);
        }
      }
    });
  }
}

// Feature rows: per round, each rank reads a slice of its block's rows (stored dtype),
// converts them to the output dtype as partition_dataset does (widen to float32, narrow with
// rounding to nearest even) and sends runs of consecutive rows of one (part, type) to the
// part's writer: [part, type (-1: homogeneous), first row, rows k] [k * row bytes].
void DistWriter::move_features() {
  const DistLayout& L = *layout_;
  const int R = comm_.size();
  const int64_t rows = static_cast<int64_t>(part_.size());
  const size_t out_size = dtype_size(o_.feature_dtype);
  // The reader and its first-row offset of block row i; type -1: homogeneous.
  auto type_of_row = [&](int64_t i) {
    return schema_ ? schema_->type_of(shard_.node_begin + i) : -1;
  };
  const std::vector<int64_t> bounds = round_bounds(rows, ctx_.round_feature_bytes, [&](int64_t i) {
    const data::ShardFeatures& f = features_of(type_of_row(i));
    return std::max<int64_t>(1, f.dim * static_cast<int64_t>(dtype_size(f.dtype) + out_size));
  });
  const int64_t local_rounds = static_cast<int64_t>(bounds.size()) - 1;
  const int64_t total_rounds = rounds(local_rounds);
  const std::vector<int64_t>& new_id = L.block_new_id();

  std::vector<uint8_t> stored;
  std::vector<float> wide;
  for (int64_t k = 0; k < total_rounds; ++k) {
    std::vector<std::vector<uint8_t>> send(static_cast<size_t>(R));
    failure_.run([&] {
      if (k >= local_rounds) return;
      const int64_t a = bounds[k], b = bounds[k + 1];
      // One segment per node type in [a, b) (homogeneous: one).
      for (int64_t s = a; s < b;) {
        const int t = type_of_row(s);
        int64_t e = b;
        if (t >= 0) {
          const data::NodeType& nt = schema_->node_types[t];
          e = std::min(b, nt.offset + nt.count - shard_.node_begin);
        }
        const data::ShardFeatures& f = features_of(t);
        if (f.dim > 0) {
          const int64_t offset = t >= 0 ? schema_->node_types[t].offset : 0;
          const size_t in_row = static_cast<size_t>(f.dim) * dtype_size(f.dtype);
          const size_t out_row = static_cast<size_t>(f.dim) * out_size;
          stored.resize(static_cast<size_t>(e - s) * in_row);
          f.read(shard_.node_begin + s - offset, shard_.node_begin + e - offset, stored.data());
          wide.resize(static_cast<size_t>(f.dim));
          const std::vector<int64_t> order = rows_by_part(part_, s, e);
          for (size_t x = 0; x < order.size();) {
            const int p = part_[order[x]];
            size_t y = x;
            while (y < order.size() && part_[order[y]] == p) ++y;
            const int64_t first = t >= 0 ? L.type_starts()[p][t] : L.ranges()[p];
            BytePacker pack(&send[L.writer(p)]);
            pack.put(p);
            pack.put(t);
            pack.put(new_id[order[x]] - first);
            pack.put(static_cast<int64_t>(y - x));
            uint8_t* dst = pack.reserve((y - x) * out_row);
            for (size_t z = x; z < y; ++z) {
              const uint8_t* src = stored.data() + static_cast<size_t>(order[z] - s) * in_row;
              const float* row = reinterpret_cast<const float*>(src);
              if (f.dtype != DType::kFloat32) {
                widen_to_floats(src, f.dim, f.dtype, wide.data());
                row = wide.data();
              } else if (reinterpret_cast<uintptr_t>(src) % alignof(float) != 0) {
                std::memcpy(wide.data(), src, in_row);
                row = wide.data();
              }
              narrow_floats(row, f.dim, o_.feature_dtype, dst + (z - x) * out_row);
            }
            x = y;
          }
        }
        s = e;
      }
    });
    if (failure_.failed()) send.assign(static_cast<size_t>(R), {});
    const std::vector<std::vector<uint8_t>> recv = comm_.alltoall(std::move(send));
    failure_.run([&] {
      for (const auto& message : recv) {
        ByteReader rd(message);
        while (!rd.done()) {
          const int p = static_cast<int>(rd.get());
          const int t = static_cast<int>(rd.get());
          const int64_t first = rd.get(), n = rd.get();
          const int64_t dim = features_of(t).dim;
          const size_t bytes = static_cast<size_t>(n * dim) * out_size;
          parts_.at(p).feat[t < 0 ? 0 : t]->write_at(first * dim * out_size, rd.take(bytes), bytes);
        }
      }
    });
  }
}

// Split ids (ascending original ids of the block) mapped to new ids and sent to the writer
// of their part; a writer appends what it receives in rank order, which keeps them sorted.
void DistWriter::move_splits() {
  const DistLayout& L = *layout_;
  const int R = comm_.size(), P = o_.num_parts;
  split_counts_.assign(static_cast<size_t>(P) * 3, 0);
  std::vector<std::vector<uint8_t>> send(static_cast<size_t>(R));
  failure_.run([&] {
    const std::vector<int64_t>* splits[3] = {&shard_.train_idx, &shard_.valid_idx,
                                             &shard_.test_idx};
    for (int kind = 0; kind < 3; ++kind) {
      std::map<int, std::vector<int64_t>> by_part;
      for (int64_t id : *splits[kind]) {
        const int64_t i = id - shard_.node_begin;
        PARTITA_CHECK(i >= 0 && i < static_cast<int64_t>(part_.size()), Error,
                      "{}: {} id {} is outside this rank's block [{}, {})", shard_.path,
                      kSplitNames[kind], id, shard_.node_begin, shard_.node_end);
        by_part[part_[i]].push_back(L.block_new_id()[i]);
      }
      for (const auto& [p, ids] : by_part) {
        BytePacker pack(&send[L.writer(p)]);
        pack.put(p);
        pack.put(kind);
        pack.put(static_cast<int64_t>(ids.size()));
        pack.put_array(ids.data(), static_cast<int64_t>(ids.size()));
        split_counts_[static_cast<size_t>(p) * 3 + kind] += static_cast<int64_t>(ids.size());
      }
    }
  });
  if (failure_.failed()) send.assign(static_cast<size_t>(R), {});
  const std::vector<std::vector<uint8_t>> recv = comm_.alltoall(std::move(send));
  failure_.run([&] {
    for (const auto& message : recv) {
      ByteReader rd(message);
      while (!rd.done()) {
        const int p = static_cast<int>(rd.get());
        const int kind = static_cast<int>(rd.get());
        const int64_t n = rd.get();
        std::vector<int64_t>& ids = parts_.at(p).split[kind];
        const size_t at = ids.size();
        ids.resize(at + static_cast<size_t>(n));
        if (n > 0) std::memcpy(ids.data() + at, rd.take(n * 8), static_cast<size_t>(n) * 8);
      }
    }
  });
}

// Closes every file, then the creators finish theirs (CRC, rename). Returns this rank's
// file entries.
std::vector<FileEntry> DistWriter::finish_files() {
  std::vector<FileEntry> files;
  const DistLayout& L = *layout_;
  failure_.run([&] {
    if (comm_.rank() != 0 && node_map_) node_map_->close();
  });
  failure_.agree(comm_);  // every rank's node_map rows are on disk
  failure_.run([&] {
    if (comm_.rank() == 0)
      files.push_back({kNodeMapFile, DType::kInt64, {shard_.num_nodes}, node_map_->finish()});
    for (auto& [p, po] : parts_) {
      const int64_t n = L.part_nodes(p), e = L.part_edges(p);
      files.push_back({part_file(p, "indptr"), DType::kInt64, {n + 1}, po.indptr->finish()});
      files.push_back({part_file(p, "indices"), DType::kInt64, {e}, po.indices->finish()});
      if (schema_) files.push_back({part_file(p, "etype"), DType::kInt32, {e}, po.etype->finish()});
      for (size_t t = 0; t < po.feat.size(); ++t) {
        if (!po.feat[t]) continue;
        const int type = schema_ ? static_cast<int>(t) : -1;
        const int64_t rows = schema_ ? L.type_starts()[p][t + 1] - L.type_starts()[p][t] : n;
        const std::string name =
            schema_ ? type_feature_name(schema_->node_types[t].name) : std::string("feat");
        files.push_back({part_file(p, name),
                         o_.feature_dtype,
                         {rows, features_of(type).dim},
                         po.feat[t]->finish()});
      }
      files.push_back({part_file(p, "label"), DType::kInt64, {n}, po.label->finish()});
      for (int kind = 0; kind < 3; ++kind) {
        const std::string rel = part_file(p, kSplitNames[kind]);
        files.push_back({rel,
                         DType::kInt64,
                         {static_cast<int64_t>(po.split[kind].size())},
                         write_npy<int64_t>(out(rel), po.split[kind])});
      }
    }
  });
  failure_.agree(comm_);
  return files;
}

PartitionSummary DistWriter::run() {
  Stopwatch watch;
  Phases phases = std::move(ctx_.phases);
  check_inputs();
  prepare_directories();
  layout_.emplace(shard_.num_nodes, shard_.node_begin, part_, graph_.in_edges, o_.num_parts,
                  schema_ ? &*schema_ : nullptr, comm_);
  phases.emplace_back("renumber", watch.seconds());
  if (comm_.rank() == 0)
    log_info("partition: writing {} parts to {} from {} ranks", o_.num_parts, o_.out_dir,
             comm_.size());

  watch.restart();
  open_files();
  move_structure();
  failure_.agree(comm_);
  phases.emplace_back("write_structure", watch.seconds());
  watch.restart();
  move_features();
  failure_.agree(comm_);
  phases.emplace_back("write_features", watch.seconds());
  watch.restart();
  move_splits();
  failure_.agree(comm_);
  std::vector<FileEntry> mine = finish_files();
  phases.emplace_back("write_splits", watch.seconds());
  std::optional<EdgeSplitStats> split_stats;
  if (ctx_.edge_split) {
    watch.restart();
    split_stats = write_edge_split_distributed(*ctx_.edge_split, *layout_, shard_.node_begin,
                                               o_.out_dir, comm_, threads_, &mine);
    phases.emplace_back("write_edge_split", watch.seconds());
  }

  // What every rank needs for the metadata: files, cut, per-part and per-relation figures.
  std::vector<uint8_t> bytes;
  serialize_files(mine, &bytes);
  WriteResult written;
  for (const auto& theirs : comm_.allgather(bytes)) deserialize_files(theirs, &written.files);
  written.edge_cut = gather_sum(comm_, {edge_cut_})[0];
  const std::vector<int64_t> relation_edges = gather_sum(comm_, relation_edges_);
  const std::vector<int64_t> split_counts = gather_sum(comm_, split_counts_);
  const DistLayout& L = *layout_;
  const int P = o_.num_parts;
  for (int p = 0; p < P; ++p) {
    PartStats s;
    s.nodes = L.part_nodes(p);
    s.edges = L.part_edges(p);
    s.train_nodes = split_counts[p * 3];
    s.valid_nodes = split_counts[p * 3 + 1];
    s.test_nodes = split_counts[p * 3 + 2];
    if (schema_) {
      for (int t = 0; t < schema_->num_types(); ++t)
        s.type_nodes.push_back(L.type_starts()[p][t + 1] - L.type_starts()[p][t]);
      const int rels = schema_->num_relations();
      s.relation_edges.assign(relation_edges.begin() + static_cast<ptrdiff_t>(p) * rels,
                              relation_edges.begin() + static_cast<ptrdiff_t>(p + 1) * rels);
    }
    written.parts.push_back(std::move(s));
  }
  std::optional<TypedMeta> typed;
  if (schema_) {
    written.type_starts = L.type_starts();
    std::vector<int64_t> feat_dims;
    for (const data::ShardFeatures& f : shard_.type_features) feat_dims.push_back(f.dim);
    typed = typed_meta(*schema_, feat_dims, written);
    typed->reverse_relations = std::any_of(schema_->relations.begin(), schema_->relations.end(),
                                           [](const data::Relation& r) { return r.reverse; });
  }
  DatasetFacts facts;
  facts.dataset = shard_.path;
  facts.num_nodes = shard_.num_nodes;
  facts.feat_dim = schema_ ? 0 : shard_.features.dim;
  facts.num_classes = shard_.num_classes;
  PartitionMeta meta = assemble_meta(o_, facts, L.ranges(), std::move(typed), std::move(written),
                                     std::move(phases), std::move(split_stats));
  // Peaks last: every rank's, after all its work.
  const int64_t my_peak = peak_rss_bytes();
  for (const auto& b : comm_.allgather(
           std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(&my_peak),
                                reinterpret_cast<const uint8_t*>(&my_peak) + sizeof my_peak))) {
    int64_t v = 0;
    std::memcpy(&v, b.data(), sizeof v);
    meta.summary.rank_peak_rss_bytes.push_back(v);
  }
  meta.summary.peak_rss_bytes = *std::max_element(meta.summary.rank_peak_rss_bytes.begin(),
                                                  meta.summary.rank_peak_rss_bytes.end());
  failure_.run([&] {
    if (comm_.rank() == 0) {
      warn_about_parts(meta.summary, o_);
      write_meta(o_.out_dir, meta);
    }
  });
  failure_.agree(comm_);
  return meta.summary;
}

}  // namespace

PartitionSummary write_partition_distributed(const data::DatasetShard& shard,
                                             const ShardGraph& graph,
                                             const std::vector<int32_t>& part,
                                             const PartitionOptions& options, DistComm& comm,
                                             DistWriteContext context) {
  return DistWriter(shard, graph, part, options, comm, std::move(context)).run();
}

PartitionSummary write_partition_distributed(const data::DatasetShard& shard,
                                             const ShardGraph& graph,
                                             const std::vector<int32_t>& part,
                                             const PartitionOptions& options, DistComm& comm) {
  return write_partition_distributed(shard, graph, part, options, comm, DistWriteContext{});
}

}  // namespace partita::partition
