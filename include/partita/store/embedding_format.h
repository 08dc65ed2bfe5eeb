#pragma once
// The byte formats of learned embeddings (docs/formats.md), each with one writer and one
// reader here:
//   - a table state: one DistEmbedding's owned rows and optimizer state, what
//     serialize_state() writes, load_state() reads, and the table's state/load routes carry;
//   - an embedding file: the states of every table one rank owns, in node type order, the
//     file `embeddings-<E>-rank<r>.bin` beside checkpoint E (train/checkpoint.h).
//
// Table state, version 1 (all little-endian, no padding):
//   magic "PTEMBED1" (8 bytes), u32 version, u32 optimizer (optim::SparseOptimizer),
//   i64 table id, i64 dim, i64 begin, i64 end,
//   f32 rows [n, dim] (n = end - begin); Adagrad: f32 sums [n, dim]; Adam: f32 m [n, dim],
//   f32 v [n, dim], i64 steps [n]; then u32 CRC-32 of every byte before it.
// Embedding file, version 2: magic "PTEMBFIL" (8 bytes), u32 version, u32 table count, then
//   per table a u64 byte count and that many bytes of table state.
// Embedding file, version 1 (written before the file had a header, still read): per table
//   a u64 byte count and the table state, nothing else.
//
// Errors: every reader throws FormatError naming `source` (a file, or the rank that sent
// the bytes) on a truncated, corrupt or unsupported input, never reads out of bounds; a
// version it does not read is named with the versions it does.
//
// Thread-safety: pure functions.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/array_view.h"
#include "partita/optim/sparse_optimizer.h"

namespace partita::store {

constexpr uint32_t kEmbeddingStateVersion = 1;
constexpr uint32_t kEmbeddingFileVersion = 2;

// The fields of a table state before its arrays.
struct EmbeddingStateHeader {
  optim::SparseOptimizer optimizer = optim::SparseOptimizer::kSgd;
  int64_t table_id = 0;
  int64_t dim = 0;
  int64_t begin = 0;
  int64_t end = 0;  // rows [begin, end)
};

struct EmbeddingState {
  EmbeddingStateHeader header;
  std::vector<float> rows;  // [end - begin, dim]
  optim::SparseOptimizerState optimizer;
};

// A table state of `header`, `rows` ([end - begin, dim]) and `optimizer` (sized as
// optim::empty_state for the header's optimizer; Error otherwise).
std::vector<uint8_t> encode_embedding_state(const EmbeddingStateHeader& header,
                                            ArrayView<const float> rows,
                                            const optim::SparseOptimizerState& optimizer);
// The one reader of table states: checks magic, checksum, version, the header's own
// consistency and every length; FormatError naming `source` otherwise.
EmbeddingState decode_embedding_state(const uint8_t* data, size_t size, const std::string& source);

// An embedding file (current version) holding `states` in order.
std::string encode_embedding_file(const std::vector<std::vector<uint8_t>>& states);
// The one reader of embedding files (versions 1 and 2): the table states, which must be
// exactly `tables` of them; FormatError naming `source` otherwise. The states themselves are
// read by decode_embedding_state (through DistEmbedding::load_state).
std::vector<std::vector<uint8_t>> decode_embedding_file(const std::string& bytes, size_t tables,
                                                        const std::string& source);
// The states of the tables `table_ids` from an embedding file (versions 1 and 2), in that
// order, whatever else it holds: a file written for more tables (HAN's, before it kept only
// the tables its model reads) still restores those a model has. Checks the file as
// decode_embedding_file does; FormatError naming `source` when a table is missing.
std::vector<std::vector<uint8_t>> decode_embedding_file_tables(
    const std::string& bytes, const std::vector<int64_t>& table_ids, const std::string& source);

}  // namespace partita::store
