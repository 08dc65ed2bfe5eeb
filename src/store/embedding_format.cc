#include "partita/store/embedding_format.h"

#include <cstring>
#include <limits>

#include "partita/core/error.h"
#include "partita/core/npy.h"

namespace partita::store {
namespace {

constexpr char kStateMagic[8] = {'P', 'T', 'E', 'M', 'B', 'E', 'D', '1'};
constexpr char kFileMagic[8] = {'P', 'T', 'E', 'M', 'B', 'F', 'I', 'L'};
constexpr size_t kStateHeaderBytes = sizeof(kStateMagic) + 4 + 4 + 4 * 8;

template <class T>
void append(std::vector<uint8_t>& out, const T* data, size_t count) {
  const size_t at = out.size();
  out.resize(at + count * sizeof(T));
  if (count > 0) std::memcpy(out.data() + at, data, count * sizeof(T));
}

template <class T>
void append_one(std::vector<uint8_t>& out, T value) {
  append(out, &value, 1);
}

// Reads fields in order, every length checked; errors name `source` and `what`.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size, const std::string& source, const char* what)
      : p_(data), end_(data + size), source_(source), what_(what) {}
  template <class T>
  T get() {
    T value;
    read(&value, sizeof(T));
    return value;
  }
  // `count` values of T; the length is checked before anything is allocated.
  template <class T>
  std::vector<T> array(size_t count) {
    PARTITA_CHECK(count <= left() / sizeof(T), FormatError, "{}: {} truncated", source_, what_);
    std::vector<T> out(count);
    read(out.data(), count * sizeof(T));
    return out;
  }
  void skip(size_t n) {
    PARTITA_CHECK(left() >= n, FormatError, "{}: {} truncated", source_, what_);
    p_ += n;
  }
  const uint8_t* here() const { return p_; }
  size_t left() const { return static_cast<size_t>(end_ - p_); }

 private:
  void read(void* dst, size_t n) {
    PARTITA_CHECK(left() >= n, FormatError, "{}: {} truncated", source_, what_);
    if (n > 0) std::memcpy(dst, p_, n);
    p_ += n;
  }
  const uint8_t* p_;
  const uint8_t* end_;
  const std::string& source_;
  const char* what_;
};

// The table states of a file, from `in` placed at the first byte count.
std::vector<std::vector<uint8_t>> read_states(Reader& in, size_t tables,
                                              const std::string& source) {
  std::vector<std::vector<uint8_t>> states;
  for (size_t i = 0; i < tables; ++i) {
    PARTITA_CHECK(in.left() >= sizeof(uint64_t), FormatError,
                  "{}: truncated (embedding table {} of {} missing)", source, i + 1, tables);
    const uint64_t size = in.get<uint64_t>();
    PARTITA_CHECK(in.left() >= size, FormatError,
                  "{}: truncated (embedding table {} of {} is cut short)", source, i + 1, tables);
    states.emplace_back(in.here(), in.here() + size);
    in.skip(static_cast<size_t>(size));
  }
  PARTITA_CHECK(in.left() == 0, FormatError,
                "{}: {} bytes after the {} embedding tables this model has", source, in.left(),
                tables);
  return states;
}

// The number of table states in an embedding file: version 2's header says; version 1 is
// walked to its end (what does not parse is decode_embedding_file's to report).
size_t file_table_count(const std::string& bytes) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() >= sizeof(kFileMagic) + 8 &&
      std::memcmp(data, kFileMagic, sizeof(kFileMagic)) == 0) {
    uint32_t count = 0;
    std::memcpy(&count, data + sizeof(kFileMagic) + 4, sizeof(count));
    return count;
  }
  size_t count = 0;
  for (size_t at = 0; bytes.size() - at >= sizeof(uint64_t); ++count) {
    uint64_t size = 0;
    std::memcpy(&size, data + at, sizeof(size));
    if (size > bytes.size() - at - sizeof(uint64_t)) return count + 1;
    at += sizeof(uint64_t) + static_cast<size_t>(size);
  }
  return count;
}

// The table id in a state's header (after the magic, the version and the optimizer).
int64_t state_table_id(const std::vector<uint8_t>& state, const std::string& source) {
  constexpr size_t at = sizeof(kStateMagic) + 4 + 4;
  PARTITA_CHECK(state.size() >= at + sizeof(int64_t) &&
                    std::memcmp(state.data(), kStateMagic, sizeof(kStateMagic)) == 0,
                FormatError, "{}: not an embedding state (bad magic or truncated)", source);
  int64_t id = 0;
  std::memcpy(&id, state.data() + at, sizeof(id));
  return id;
}

}  // namespace

std::vector<uint8_t> encode_embedding_state(const EmbeddingStateHeader& header,
                                            ArrayView<const float> rows,
                                            const optim::SparseOptimizerState& optimizer) {
  const int64_t n = header.end - header.begin;
  const optim::SparseOptimizerState want = optim::empty_state(header.optimizer, n, header.dim);
  PARTITA_CHECK(rows.size() == n * header.dim && optimizer.first.size() == want.first.size() &&
                    optimizer.second.size() == want.second.size() &&
                    optimizer.steps.size() == want.steps.size(),
                Error, "internal: embedding table {}: state arrays do not match its header",
                header.table_id);
  std::vector<uint8_t> out;
  out.reserve(
      kStateHeaderBytes + 4 +
      (static_cast<size_t>(rows.size()) + optimizer.first.size() + optimizer.second.size()) *
          sizeof(float) +
      optimizer.steps.size() * 8);
  append(out, kStateMagic, sizeof(kStateMagic));
  append_one<uint32_t>(out, kEmbeddingStateVersion);
  append_one<uint32_t>(out, static_cast<uint32_t>(header.optimizer));
  append_one<int64_t>(out, header.table_id);
  append_one<int64_t>(out, header.dim);
  append_one<int64_t>(out, header.begin);
  append_one<int64_t>(out, header.end);
  append(out, rows.data(), static_cast<size_t>(rows.size()));
  append(out, optimizer.first.data(), optimizer.first.size());
  append(out, optimizer.second.data(), optimizer.second.size());
  append(out, optimizer.steps.data(), optimizer.steps.size());
  append_one<uint32_t>(out, crc32_update(0, out.data(), out.size()));
  return out;
}

EmbeddingState decode_embedding_state(const uint8_t* data, size_t size, const std::string& source) {
  PARTITA_CHECK(
      size >= sizeof(kStateMagic) + 4 && std::memcmp(data, kStateMagic, sizeof(kStateMagic)) == 0,
      FormatError, "{}: not an embedding state (bad magic)", source);
  uint32_t stored_crc;
  std::memcpy(&stored_crc, data + size - 4, 4);
  PARTITA_CHECK(crc32_update(0, data, size - 4) == stored_crc, FormatError,
                "{}: embedding state checksum mismatch (corrupt or truncated)", source);
  Reader in(data + sizeof(kStateMagic), size - sizeof(kStateMagic) - 4, source, "embedding state");
  const uint32_t version = in.get<uint32_t>();
  PARTITA_CHECK(version == kEmbeddingStateVersion, FormatError,
                "{}: embedding state version {} is not supported (this build reads version {})",
                source, version, kEmbeddingStateVersion);
  EmbeddingState state;
  EmbeddingStateHeader& h = state.header;
  const uint32_t kind = in.get<uint32_t>();
  PARTITA_CHECK(kind <= static_cast<uint32_t>(optim::SparseOptimizer::kAdam), FormatError,
                "{}: embedding state of unknown optimizer {}", source, kind);
  h.optimizer = static_cast<optim::SparseOptimizer>(kind);
  h.table_id = in.get<int64_t>();
  h.dim = in.get<int64_t>();
  h.begin = in.get<int64_t>();
  h.end = in.get<int64_t>();
  PARTITA_CHECK(h.dim > 0 && h.begin >= 0 && h.begin <= h.end, FormatError,
                "{}: embedding state of dim {} and rows [{}, {})", source, h.dim, h.begin, h.end);
  const int64_t n = h.end - h.begin;
  PARTITA_CHECK(n <= std::numeric_limits<int64_t>::max() / h.dim, FormatError,
                "{}: embedding state of {} rows of {} values", source, n, h.dim);
  const size_t values = static_cast<size_t>(n * h.dim);
  state.rows = in.array<float>(values);
  if (h.optimizer != optim::SparseOptimizer::kSgd) state.optimizer.first = in.array<float>(values);
  if (h.optimizer == optim::SparseOptimizer::kAdam) {
    state.optimizer.second = in.array<float>(values);
    state.optimizer.steps = in.array<int64_t>(static_cast<size_t>(n));
  }
  PARTITA_CHECK(in.left() == 0, FormatError, "{}: {} unexpected bytes after the embedding state",
                source, in.left());
  for (const int64_t t : state.optimizer.steps)
    PARTITA_CHECK(t >= 0, FormatError, "{}: negative Adam step count {}", source, t);
  return state;
}

std::string encode_embedding_file(const std::vector<std::vector<uint8_t>>& states) {
  std::string out(kFileMagic, sizeof(kFileMagic));
  const uint32_t header[2] = {kEmbeddingFileVersion, static_cast<uint32_t>(states.size())};
  out.append(reinterpret_cast<const char*>(header), sizeof(header));
  for (const auto& state : states) {
    const uint64_t size = state.size();
    out.append(reinterpret_cast<const char*>(&size), sizeof(size));
    out.append(reinterpret_cast<const char*>(state.data()), state.size());
  }
  return out;
}

std::vector<std::vector<uint8_t>> decode_embedding_file(const std::string& bytes, size_t tables,
                                                        const std::string& source) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  Reader in(data, bytes.size(), source, "embedding file");
  if (bytes.size() >= sizeof(kFileMagic) &&
      std::memcmp(data, kFileMagic, sizeof(kFileMagic)) == 0) {
    in.skip(sizeof(kFileMagic));
    const uint32_t version = in.get<uint32_t>();
    PARTITA_CHECK(version == kEmbeddingFileVersion, FormatError,
                  "{}: embedding file version {} is not supported (this build reads versions 1 "
                  "and {})",
                  source, version, kEmbeddingFileVersion);
    const uint32_t count = in.get<uint32_t>();
    PARTITA_CHECK(count == tables, FormatError, "{}: {} embedding tables, this model has {}",
                  source, count, tables);
    return read_states(in, tables, source);
  }
  // Version 1 had no header: its first table's state (magic "PTEMBED1") follows a byte count.
  const bool v1 = bytes.size() >= 8 + sizeof(kStateMagic) &&
                  std::memcmp(data + 8, kStateMagic, sizeof(kStateMagic)) == 0;
  PARTITA_CHECK(v1 || (tables == 0 && bytes.empty()), FormatError,
                "{}: not an embedding file (bad magic; this build reads versions 1 and {})", source,
                kEmbeddingFileVersion);
  return read_states(in, tables, source);
}

}  // namespace partita::store

namespace partita::store {

std::vector<std::vector<uint8_t>> decode_embedding_file_tables(
    const std::string& bytes, const std::vector<int64_t>& table_ids, const std::string& source) {
  std::vector<std::vector<uint8_t>> all =
      decode_embedding_file(bytes, file_table_count(bytes), source);
  std::vector<std::vector<uint8_t>> picked;
  for (int64_t id : table_ids) {
    bool found = false;
    for (std::vector<uint8_t>& state : all) {
      if (state.empty() || state_table_id(state, source) != id) continue;
      picked.push_back(std::move(state));
      state.clear();
      found = true;
      break;
    }
    PARTITA_CHECK(found, FormatError, "{}: holds no state of embedding table {} (this model's)",
                  source, id);
  }
  return picked;
}

}  // namespace partita::store
