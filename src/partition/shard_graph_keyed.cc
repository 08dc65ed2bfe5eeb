// Stage 1 on several ranks for edges that carry arrays (shard_graph_keyed.h).
//
// Wire format: one record per entry, 32 + B bytes (B: the bytes of one row of every array,
// in shard.edge_arrays' order): (key, destination, time, position) as 64-bit words, then the
// rows. key is the source (typed: relation << 47 | source, as shard_graph.cc packs it);
// position is 2 * listing position, + 1 for a reverse entry; time is 0 without edge_time.
// Rows are ordered by data::order_row on (key, time, position), which no rank count or
// arrival order changes.
#include "shard_graph_keyed.h"

#include <cstring>

#include "partita/core/error.h"
#include "partita/data/order_rows.h"

namespace partita::partition {
namespace {

constexpr size_t kHead = 32;

struct Entry {
  data::EdgeOrderKey key;
  const uint8_t* row;  // the record's array rows
};

}  // namespace

void build_keyed_rows(data::DatasetShard& shard, bool reverse, DistComm& comm, int threads,
                      ShardGraph& g) {
  const int ranks = comm.size();
  const int64_t m = static_cast<int64_t>(shard.src.size());
  const std::vector<data::ExtraArray>& arrays = shard.edge_arrays;
  size_t payload = 0;
  for (const data::ExtraArray& a : arrays) {
    PARTITA_CHECK(a.rows() == m, Error, "internal: {} holds {} rows for {} edges", a.name, a.rows(),
                  m);
    payload += a.row_bytes();
  }
  const size_t record = kHead + payload;
  const data::ExtraArray* time = data::find_array(arrays, data::kEdgeTimeName);
  const int64_t* t = time ? reinterpret_cast<const int64_t*>(time->values.data()) : nullptr;
  const BlockOwner owner(shard.num_nodes, ranks);

  std::vector<std::vector<uint8_t>> send(static_cast<size_t>(ranks));
  for (int64_t i = 0; i < m; ++i)
    edge_entries(shard, i, reverse, owner, [&](int r, uint64_t key, int64_t row, bool reversed) {
      std::vector<uint8_t>& out = send[r];
      const size_t at = out.size();
      out.resize(at + record);
      const int64_t head[4] = {static_cast<int64_t>(key), row, t ? t[i] : 0,
                               2 * (shard.first_edge + i) + reversed};
      std::memcpy(out.data() + at, head, kHead);
      size_t off = at + kHead;
      for (const data::ExtraArray& a : arrays) {
        std::memcpy(out.data() + off, a.values.data() + i * a.row_bytes(), a.row_bytes());
        off += a.row_bytes();
      }
    });
  // The arrays' values are sent: only their names, dtypes and dims stay.
  for (data::ExtraArray& a : shard.edge_arrays) std::vector<uint8_t>().swap(a.values);
  std::vector<int64_t>().swap(shard.src);
  std::vector<int64_t>().swap(shard.dst);
  std::vector<int32_t>().swap(shard.edge_relation);
  const std::vector<std::vector<uint8_t>> recv = comm.alltoall(std::move(send));

  const int64_t rows = g.node_end - g.node_begin;
  graph::Csr& csc = g.in_edges;
  csc.indptr.assign(static_cast<size_t>(rows) + 1, 0);
  auto for_each_record = [&](auto&& fn) {
    for (const std::vector<uint8_t>& buffer : recv) {
      PARTITA_CHECK(buffer.size() % record == 0, Error, "internal: edge message of {} bytes",
                    buffer.size());
      for (size_t at = 0; at < buffer.size(); at += record) {
        int64_t head[4];
        std::memcpy(head, buffer.data() + at, kHead);
        const int64_t row = head[1] - g.node_begin;
        PARTITA_CHECK(row >= 0 && row < rows, Error,
                      "internal: rank {} received an edge to {}, outside its block [{}, {})",
                      comm.rank(), head[1], g.node_begin, g.node_end);
        fn(row, data::EdgeOrderKey{head[0], head[2], head[3]}, buffer.data() + at + kHead);
      }
    }
  };
  for_each_record(
      [&](int64_t row, const data::EdgeOrderKey&, const uint8_t*) { ++csc.indptr[row + 1]; });
  for (int64_t v = 0; v < rows; ++v) csc.indptr[v + 1] += csc.indptr[v];
  std::vector<Entry> entries(static_cast<size_t>(csc.indptr[rows]));
  {
    std::vector<int64_t> cursor(csc.indptr.begin(), csc.indptr.end() - 1);
    for_each_record([&](int64_t row, const data::EdgeOrderKey& key, const uint8_t* r) {
      entries[cursor[row]++] = {key, r};
    });
  }
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

}  // namespace partita::partition
