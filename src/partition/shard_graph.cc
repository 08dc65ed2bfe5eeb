// Stage 1 of the pipeline on several ranks (pipeline.h): every listed edge travels to the
// owner of its destination's node block (and, when reverse edges are asked for, its reverse
// to the owner of its source's block), where the block's in-edge CSC is built.
//
// Wire format: one entry is two uint64 words, (key, destination), with key = source for
// homogeneous graphs and relation << 47 | source for typed ones (the packing of
// data/hetero_graph.cc), so sorting a row's keys sorts it by (relation, source) and
// std::unique drops repeats within a relation. The received order does not matter: rows
// are sorted and deduplicated, so the result is the same for every rank count, thread
// count and arrival order.
#include <algorithm>

#include "partita/core/error.h"
#include "partita/core/parallel.h"
#include "partita/partition/pipeline.h"
#include "shard_graph_keyed.h"

namespace partita::partition {
namespace {

constexpr uint64_t kSourceMask = (uint64_t{1} << kRelationShift) - 1;
constexpr int64_t kChunk = int64_t{1} << 16;

// Packs this rank's edges (consuming shard.src/dst/edge_relation) into one buffer per
// destination rank: entries (key, dst) for the edge's destination owner, and the reverse
// (key', src) for the source's owner when `reverse` is set. Self loops are skipped.
std::vector<std::vector<uint8_t>> pack_edges(data::DatasetShard& shard, bool reverse, int ranks,
                                             int threads) {
  const int64_t m = static_cast<int64_t>(shard.src.size());
  const BlockOwner owner(shard.num_nodes, ranks);
  // Pass 1: entries per (chunk, rank), so each chunk writes its own slice of each buffer.
  const int64_t chunks = (m + kChunk - 1) / kChunk;
  std::vector<int64_t> count(static_cast<size_t>(chunks * ranks + ranks), 0);
  auto for_each_entry = [&](int64_t b, int64_t e, auto&& emit) {
    for (int64_t i = b; i < e; ++i) edge_entries(shard, i, reverse, owner, emit);
  };
  parallel_chunks(0, m, kChunk, threads, [&](int64_t b, int64_t e) {
    int64_t* c = count.data() + (b / kChunk) * ranks;
    for_each_entry(b, e, [&](int r, uint64_t, int64_t, bool) { ++c[r]; });
  });
  // Exclusive offsets per rank buffer, chunk by chunk.
  std::vector<int64_t> total(static_cast<size_t>(ranks), 0);
  for (int64_t c = 0; c < chunks; ++c)
    for (int r = 0; r < ranks; ++r) {
      const int64_t n = count[c * ranks + r];
      count[c * ranks + r] = total[r];
      total[r] += n;
    }
  std::vector<std::vector<uint8_t>> send(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) send[r].resize(static_cast<size_t>(total[r]) * 16);
  parallel_chunks(0, m, kChunk, threads, [&](int64_t b, int64_t e) {
    int64_t* cursor = count.data() + (b / kChunk) * ranks;
    for_each_entry(b, e, [&](int r, uint64_t key, int64_t d, bool) {
      uint64_t* out = reinterpret_cast<uint64_t*>(send[r].data()) + 2 * cursor[r]++;
      out[0] = key;
      out[1] = static_cast<uint64_t>(d);
    });
  });
  std::vector<int64_t>().swap(shard.src);
  std::vector<int64_t>().swap(shard.dst);
  std::vector<int32_t>().swap(shard.edge_relation);
  return send;
}

}  // namespace

graph::Csr rows_of_entries(std::vector<std::vector<uint8_t>> recv, int64_t node_begin, int64_t rows,
                           int rank, int threads) {
  // Count entries per local row, then scatter the keys (stripes of rows per thread, each
  // scanning every received buffer: deterministic and lock-free).
  graph::Csr csc;
  csc.indptr.assign(static_cast<size_t>(rows) + 1, 0);
  const int stripes = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, rows)));
  std::vector<int64_t> bound(static_cast<size_t>(stripes) + 1);
  for (int t = 0; t <= stripes; ++t) bound[t] = rows * t / stripes;
  auto for_each_received = [&](auto&& fn) {
    parallel_chunks(0, stripes, 1, stripes, [&](int64_t b, int64_t e) {
      for (const auto& buffer : recv) {
        const uint64_t* p = reinterpret_cast<const uint64_t*>(buffer.data());
        const size_t n = buffer.size() / 16;
        for (size_t i = 0; i < n; ++i) {
          const int64_t row = static_cast<int64_t>(p[2 * i + 1]) - node_begin;
          if (row >= bound[b] && row < bound[e]) fn(row, p[2 * i]);
        }
      }
    });
  };
  int64_t received = 0;
  for (const auto& buffer : recv) {
    PARTITA_CHECK(buffer.size() % 16 == 0, Error, "internal: edge message of {} bytes",
                  buffer.size());
    received += static_cast<int64_t>(buffer.size() / 16);
  }
  for_each_received([&](int64_t row, uint64_t) { ++csc.indptr[row + 1]; });
  for (int64_t v = 0; v < rows; ++v) csc.indptr[v + 1] += csc.indptr[v];
  // The stripes count the entries of the block's rows only.
  PARTITA_CHECK(csc.indptr[rows] == received, Error,
                "internal: rank {} received {} edges outside its block [{}, {})", rank,
                received - csc.indptr[rows], node_begin, node_begin + rows);
  csc.indices.resize(static_cast<size_t>(csc.indptr[rows]));
  {
    std::vector<int64_t> cursor(csc.indptr.begin(), csc.indptr.end() - 1);
    uint64_t* keys = reinterpret_cast<uint64_t*>(csc.indices.data());
    for_each_received([&](int64_t row, uint64_t key) { keys[cursor[row]++] = key; });
  }
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

  if (shard.edge_arrays.empty())
    g.in_edges = rows_of_entries(comm.alltoall(pack_edges(shard, reverse, ranks, threads)),
                                 g.node_begin, g.node_end - g.node_begin, comm.rank(), threads);
  else
    build_keyed_rows(shard, reverse, comm, threads, g);
  if (typed) {  // the keys (relation << 47 | source) split into sources and g.edge_relation
    std::vector<int64_t>& keys = g.in_edges.indices;
    g.edge_relation.resize(keys.size());
    parallel_chunks(0, static_cast<int64_t>(keys.size()), kChunk, threads,
                    [&](int64_t b, int64_t e) {
                      for (int64_t i = b; i < e; ++i) {
                        g.edge_relation[i] =
                            static_cast<int32_t>(static_cast<uint64_t>(keys[i]) >> kRelationShift);
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
