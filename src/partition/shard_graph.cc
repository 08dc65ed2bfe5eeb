// Stage 1 of the pipeline on several ranks (pipeline.h): every listed edge travels to the
// owner of its destination's node block (and, when reverse edges are asked for, its reverse
// to the owner of its source's block), where the block's in-edge CSC is built, the same for
// every rank count, thread count and arrival order.
//
// Wire format: one record per entry, starting with two 64-bit words (key, destination); key
// is the source for homogeneous graphs and relation << 47 | source for typed ones (the
// packing of data/hetero_graph.cc), so sorting a row's keys sorts it by (relation, source).
// Plain edges: 16 bytes; rows are sorted and deduplicated (std::unique drops repeats within
// a relation). Edges with arrays: 32 + B bytes, (key, destination, time, position) then the
// rows of every array in shard.edge_arrays' order (B bytes); position is 2 * listing
// position, + 1 for a reverse entry; time is 0 without edge_time. Rows are ordered by
// data::order_row on (key, time, position).
#include "shard_graph.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "layout.h"
#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "partita/data/order_rows.h"
#include "partita/partition/pipeline.h"

namespace partita::partition {
namespace {

constexpr int kRelationShift = 47;  // typed keys: relation << 47 | source
constexpr uint64_t kSourceMask = (uint64_t{1} << kRelationShift) - 1;
constexpr int64_t kChunk = int64_t{1} << 16;
constexpr size_t kKeyedHead = 32;

// One buffer per rank of the records (`record` bytes each) of this rank's listed edges: for
// edge i (none for a self loop), write(at, i, key, dst, false) for dst's owner and, when
// `reverse`, write(at, i, key', src, true) for src's (key' names the relation's reverse,
// relation + the input's relation count). Chunks of edges count, then fill, their own slice
// of each buffer in parallel. Consumes shard.src/dst/edge_relation.
template <class Write>
std::vector<std::vector<uint8_t>> pack_records(data::DatasetShard& shard, bool reverse, int ranks,
                                               int threads, size_t record, Write&& write) {
  const int64_t m = static_cast<int64_t>(shard.src.size());
  const BlockOwner owner(shard.num_nodes, ranks);
  const uint64_t relations = shard.hetero ? shard.hetero->relations.size() : 0;
  auto key = [](uint64_t rel, uint64_t source) { return (rel << kRelationShift) | source; };
  auto for_each_entry = [&](int64_t b, int64_t e, auto&& emit) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t s = shard.src[i], d = shard.dst[i];
      if (s == d) continue;
      const uint64_t rel = shard.hetero ? static_cast<uint64_t>(shard.edge_relation[i]) : 0;
      emit(owner(d), i, key(rel, s), d, false);
      if (reverse) emit(owner(s), i, key(rel + relations, d), s, true);
    }
  };
  // Entries per (chunk, rank), then turned into each chunk's first record in each buffer.
  const int64_t chunks = (m + kChunk - 1) / kChunk;
  std::vector<int64_t> first(static_cast<size_t>(chunks * ranks), 0);
  parallel_chunks(0, m, kChunk, threads, [&](int64_t b, int64_t e) {
    int64_t* count = first.data() + (b / kChunk) * ranks;
    for_each_entry(b, e, [&](int r, int64_t, uint64_t, int64_t, bool) { ++count[r]; });
  });
  std::vector<std::vector<uint8_t>> send(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    int64_t total = 0;
    for (int64_t c = 0; c < chunks; ++c) total += std::exchange(first[c * ranks + r], total);
    send[r].resize(static_cast<size_t>(total) * record);
  }
  parallel_chunks(0, m, kChunk, threads, [&](int64_t b, int64_t e) {
    int64_t* cursor = first.data() + (b / kChunk) * ranks;
    for_each_entry(b, e, [&](int r, int64_t i, uint64_t key, int64_t row, bool reversed) {
      write(send[r].data() + record * static_cast<size_t>(cursor[r]++), i, key, row, reversed);
    });
  });
  std::vector<int64_t>().swap(shard.src);
  std::vector<int64_t>().swap(shard.dst);
  std::vector<int32_t>().swap(shard.edge_relation);
  return send;
}

// The rows [node_begin, node_begin + rows) of received records (`record` bytes, the row in
// the second word): returns their CSC indptr and sets entries[k] = make(record) for the k-th
// entry, each row's in arrival order (stripes of rows per thread, each scanning every buffer:
// deterministic and lock-free). Error when a buffer is not whole records or a record's row is
// outside the block (this is rank `rank`).
template <class T, class Make>
std::vector<int64_t> place_records(const std::vector<std::vector<uint8_t>>& recv, size_t record,
                                   int64_t node_begin, int64_t rows, int rank, int threads,
                                   std::vector<T>* entries, Make&& make) {
  const int stripes = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, rows)));
  std::vector<int64_t> bound(static_cast<size_t>(stripes) + 1);
  for (int t = 0; t <= stripes; ++t) bound[t] = rows * t / stripes;
  auto for_each_received = [&](auto&& fn) {
    parallel_chunks(0, stripes, 1, stripes, [&](int64_t b, int64_t e) {
      for (const std::vector<uint8_t>& buffer : recv)
        for (size_t at = 0; at < buffer.size(); at += record) {
          int64_t row = 0;
          std::memcpy(&row, buffer.data() + at + 8, sizeof row);
          row -= node_begin;
          if (row >= bound[b] && row < bound[e]) fn(row, buffer.data() + at);
        }
    });
  };
  int64_t received = 0;
  for (const std::vector<uint8_t>& buffer : recv) {
    PARTITA_CHECK(buffer.size() % record == 0, Error, "internal: edge message of {} bytes",
                  buffer.size());
    received += static_cast<int64_t>(buffer.size() / record);
  }
  std::vector<int64_t> indptr(static_cast<size_t>(rows) + 1, 0);
  for_each_received([&](int64_t row, const uint8_t*) { ++indptr[row + 1]; });
  for (int64_t v = 0; v < rows; ++v) indptr[v + 1] += indptr[v];
  // The stripes count the entries of the block's rows only.
  PARTITA_CHECK(indptr[rows] == received, Error,
                "internal: rank {} received {} edges outside its block [{}, {})", rank,
                received - indptr[rows], node_begin, node_begin + rows);
  entries->resize(static_cast<size_t>(received));
  std::vector<int64_t> cursor(indptr.begin(), indptr.end() - 1);
  for_each_received([&](int64_t row, const uint8_t* r) { (*entries)[cursor[row]++] = make(r); });
  return indptr;
}

// Stage 1 for edges that carry arrays: the rows of this rank's block and one g.edge_columns
// entry per array (data/edge_arrays.h's order, each row of the same listed edge in the same
// slot whatever the rank count). Consumes shard.src/dst, edge_relation and edge_arrays.
void build_keyed_rows(data::DatasetShard& shard, bool reverse, DistComm& comm, int threads,
                      ShardGraph& g) {
  const int64_t m = static_cast<int64_t>(shard.src.size());
  const std::vector<data::ExtraArray>& arrays = shard.edge_arrays;
  size_t record = kKeyedHead;
  for (const data::ExtraArray& a : arrays) {
    PARTITA_CHECK(a.rows() == m, Error, "internal: {} holds {} rows for {} edges", a.name, a.rows(),
                  m);
    record += a.row_bytes();
  }
  const data::ExtraArray* time = data::find_array(arrays, data::kEdgeTimeName);
  const int64_t* t = time ? reinterpret_cast<const int64_t*>(time->values.data()) : nullptr;
  std::vector<std::vector<uint8_t>> send =
      pack_records(shard, reverse, comm.size(), threads, record,
                   [&](uint8_t* at, int64_t i, uint64_t key, int64_t row, bool reversed) {
                     const int64_t head[4] = {static_cast<int64_t>(key), row, t ? t[i] : 0,
                                              2 * (shard.first_edge + i) + reversed};
                     std::memcpy(at, head, kKeyedHead);
                     at += kKeyedHead;
                     for (const data::ExtraArray& a : arrays) {
                       std::memcpy(at, a.values.data() + i * a.row_bytes(), a.row_bytes());
                       at += a.row_bytes();
                     }
                   });
  // The arrays' values are sent: only their names, dtypes and dims stay.
  for (data::ExtraArray& a : shard.edge_arrays) std::vector<uint8_t>().swap(a.values);
  const std::vector<std::vector<uint8_t>> recv = comm.alltoall(std::move(send));

  struct Entry {
    data::EdgeOrderKey key;
    const uint8_t* row;  // the record's array rows
  };
  std::vector<Entry> entries;
  graph::Csr& csc = g.in_edges;
  csc.indptr = place_records(recv, record, g.node_begin, g.node_end - g.node_begin, comm.rank(),
                             threads, &entries, [](const uint8_t* r) {
                               int64_t head[4];
                               std::memcpy(head, r, kKeyedHead);
                               return Entry{{head[0], head[2], head[3]}, r + kKeyedHead};
                             });
  const int64_t out = data::order_rows(&csc.indptr, &entries, time != nullptr, threads,
                                       [](const Entry& x) { return x.key; });
  csc.indices.resize(static_cast<size_t>(out));
  for (int64_t k = 0; k < out; ++k) csc.indices[k] = entries[k].key.source;
  size_t off = 0;
  for (const data::ExtraArray& a : arrays) {
    Column c{a.name, a.dtype, {}, a.dim};
    const size_t w = a.row_bytes();
    c.values.resize(static_cast<size_t>(out) * w);
    for (int64_t k = 0; k < out; ++k) std::memcpy(c.values.data() + k * w, entries[k].row + off, w);
    off += w;
    g.edge_columns.push_back(std::move(c));
  }
}

}  // namespace

graph::Csr rows_of_entries(std::vector<std::vector<uint8_t>> recv, int64_t node_begin, int64_t rows,
                           int rank, int threads) {
  graph::Csr csc;
  csc.indptr =
      place_records(recv, 16, node_begin, rows, rank, threads, &csc.indices, [](const uint8_t* r) {
        int64_t key = 0;
        std::memcpy(&key, r, sizeof key);
        return key;
      });
  std::vector<std::vector<uint8_t>>().swap(recv);
  // Sort and deduplicate each row where it lies, then compact.
  graph::sort_and_dedup_rows(csc, threads);
  csc.indices.shrink_to_fit();
  return csc;
}

ShardGraph build_shard_graph(data::DatasetShard& shard, bool undirected, bool reverse_relations,
                             DistComm& comm, int threads) {
  threads = resolve_threads(threads);
  const int ranks = comm.size();
  const bool typed = shard.hetero.has_value();
  PARTITA_CHECK(shard.ranks == ranks && shard.rank == comm.rank(), Error,
                "internal: shard of rank {} of {} built on rank {} of {}", shard.rank, shard.ranks,
                comm.rank(), ranks);
  PARTITA_CHECK(shard.src.size() == shard.dst.size() &&
                    (!typed || shard.edge_relation.size() == shard.src.size()),
                Error, "internal: shard with {} sources, {} destinations, {} relations",
                shard.src.size(), shard.dst.size(), shard.edge_relation.size());
  PARTITA_CHECK(!typed || static_cast<uint64_t>(shard.num_nodes) <= kSourceMask, Error,
                "internal: typed graph of {} nodes exceeds the 2^47 ids of the packed keys",
                shard.num_nodes);
  const bool reverse = typed ? reverse_relations : undirected;

  ShardGraph g;
  g.num_nodes = shard.num_nodes;
  g.node_begin = shard.node_begin;
  g.node_end = shard.node_end;
  // Every edge has its reverse: homogeneous with reverse edges, or typed with every relation
  // mirrored by its rev_ relation (the union of a row's sources over relations then is the
  // union of its in- and out-neighbours).
  g.symmetric = reverse;

  if (shard.edge_arrays.empty()) {
    const auto write = [](uint8_t* at, int64_t, uint64_t key, int64_t row, bool) {
      const uint64_t words[2] = {key, static_cast<uint64_t>(row)};
      std::memcpy(at, words, sizeof words);
    };
    g.in_edges =
        rows_of_entries(comm.alltoall(pack_records(shard, reverse, ranks, threads, 16, write)),
                        g.node_begin, g.node_end - g.node_begin, comm.rank(), threads);
  } else {
    build_keyed_rows(shard, reverse, comm, threads, g);
  }
  if (typed) {  // the keys (relation << 47 | source) split into sources and g.edge_relation
    std::vector<int64_t>& keys = g.in_edges.indices;
    g.edge_relation.resize(keys.size());
    parallel_chunks(0, g.in_edges.num_entries(), kChunk, threads, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        g.edge_relation[i] = static_cast<int32_t>(static_cast<uint64_t>(keys[i]) >> kRelationShift);
        keys[i] &= static_cast<int64_t>(kSourceMask);
      }
    });
  }
  g.num_edges_total = g.in_edges.num_entries();
  comm.allreduce_sum(&g.num_edges_total, 1);
  // The relations as stored (data/hetero.h's convention).
  if (typed && reverse) shard.hetero->add_reverse_relations();
  return g;
}

}  // namespace partita::partition
