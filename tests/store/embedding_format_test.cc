// The byte formats of learned embeddings (store/embedding_format.h): a table state and an
// embedding file round-trip; a state laid out by hand from the documented layout, and a file
// of version 1 (written before files had a header), still read; another version, a truncated
// or a corrupt input is one FormatError naming the source (and the versions read).
#include "partita/store/embedding_format.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "partita/core/error.h"
#include "partita/core/npy.h"

namespace partita {
namespace {

using optim::SparseOptimizer;
using store::decode_embedding_file;
using store::decode_embedding_state;
using store::EmbeddingState;
using store::EmbeddingStateHeader;
using store::encode_embedding_file;
using store::encode_embedding_state;

std::string format_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

EmbeddingStateHeader header_of(SparseOptimizer kind) {
  EmbeddingStateHeader h;
  h.optimizer = kind;
  h.table_id = 3;
  h.dim = 2;
  h.begin = 10;
  h.end = 13;
  return h;
}

// A state of `kind` (of table `table`) whose values count up from `start`.
std::vector<uint8_t> state_of(SparseOptimizer kind, float start = 0.5f, int64_t table = 3) {
  EmbeddingStateHeader h = header_of(kind);
  h.table_id = table;
  std::vector<float> rows(6);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = start + static_cast<float>(i);
  optim::SparseOptimizerState s = optim::empty_state(kind, 3, 2);
  for (size_t i = 0; i < s.first.size(); ++i) s.first[i] = 0.25f * static_cast<float>(i);
  for (size_t i = 0; i < s.second.size(); ++i) s.second[i] = 2.0f + static_cast<float>(i);
  for (size_t i = 0; i < s.steps.size(); ++i) s.steps[i] = static_cast<int64_t>(7 + i);
  return encode_embedding_state(h, ArrayView<const float>(rows.data(), 6), s);
}

template <class T>
void put(std::vector<uint8_t>& out, T value) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

void reseal(std::vector<uint8_t>& state) {
  const uint32_t crc = crc32_update(0, state.data(), state.size() - 4);
  std::memcpy(state.data() + state.size() - 4, &crc, 4);
}

TEST(EmbeddingFormat, StateRoundTripsForEveryOptimizer) {
  for (SparseOptimizer kind :
       {SparseOptimizer::kSgd, SparseOptimizer::kAdagrad, SparseOptimizer::kAdam}) {
    const std::vector<uint8_t> bytes = state_of(kind);
    const EmbeddingState s = decode_embedding_state(bytes.data(), bytes.size(), "x");
    EXPECT_EQ(s.header.optimizer, kind);
    EXPECT_EQ(s.header.table_id, 3);
    EXPECT_EQ(s.header.dim, 2);
    EXPECT_EQ(s.header.begin, 10);
    EXPECT_EQ(s.header.end, 13);
    EXPECT_EQ(s.rows, (std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f}));
    const optim::SparseOptimizerState want = optim::empty_state(kind, 3, 2);
    EXPECT_EQ(s.optimizer.first.size(), want.first.size());
    EXPECT_EQ(s.optimizer.second.size(), want.second.size());
    if (kind == SparseOptimizer::kAdam) {
      EXPECT_EQ(s.optimizer.steps, (std::vector<int64_t>{7, 8, 9}));
      EXPECT_EQ(s.optimizer.second[5], 7.0f);
    }
    EXPECT_EQ(
        encode_embedding_state(s.header, ArrayView<const float>(s.rows.data(), 6), s.optimizer),
        bytes);
  }
}

TEST(EmbeddingFormat, AStateLaidOutAsDocumentedIsRead) {
  // Version 1 as docs/formats.md gives it, written field by field (Adagrad, 1 row of 2).
  std::vector<uint8_t> bytes = {'P', 'T', 'E', 'M', 'B', 'E', 'D', '1'};
  put<uint32_t>(bytes, 1);                                          // version
  put<uint32_t>(bytes, 1);                                          // optimizer: adagrad
  put<int64_t>(bytes, 4);                                           // table id
  put<int64_t>(bytes, 2);                                           // dim
  put<int64_t>(bytes, 8);                                           // begin
  put<int64_t>(bytes, 9);                                           // end
  for (float v : {1.0f, -2.0f, 0.5f, 0.25f}) put<float>(bytes, v);  // rows, then sums
  put<uint32_t>(bytes, 0);
  reseal(bytes);
  const EmbeddingState s = decode_embedding_state(bytes.data(), bytes.size(), "hand");
  EXPECT_EQ(s.header.optimizer, SparseOptimizer::kAdagrad);
  EXPECT_EQ(s.header.table_id, 4);
  EXPECT_EQ(s.rows, (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(s.optimizer.first, (std::vector<float>{0.5f, 0.25f}));
}

TEST(EmbeddingFormat, BadStatesAreOneFormatErrorNamingTheSource) {
  const std::vector<uint8_t> good = state_of(SparseOptimizer::kAdam);
  auto decode = [](const std::vector<uint8_t>& b) {
    return format_error_of([&] { decode_embedding_state(b.data(), b.size(), "ck/e"); });
  };
  EXPECT_EQ(decode(good), "");
  EXPECT_NE(decode({}).find("ck/e: not an embedding state"), std::string::npos);
  for (size_t cut : {size_t{3}, size_t{12}, size_t{40}, good.size() - 1}) {
    EXPECT_NE(decode({good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut)}).find("ck/e"),
              std::string::npos)
        << cut;
  }
  std::vector<uint8_t> flipped = good;
  flipped[60] ^= 1;
  EXPECT_NE(decode(flipped).find("checksum"), std::string::npos);
  std::vector<uint8_t> future = good;
  future[8] = 9;  // the version
  reseal(future);
  const std::string what = decode(future);
  EXPECT_NE(what.find("version 9"), std::string::npos) << what;
  EXPECT_NE(what.find("reads version 1"), std::string::npos) << what;
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  // Consistent checksum, inconsistent header: more rows than bytes, an unknown optimizer.
  std::vector<uint8_t> longer = good;
  const int64_t end = 1000000;
  std::memcpy(longer.data() + 40, &end, 8);
  reseal(longer);
  EXPECT_NE(decode(longer).find("truncated"), std::string::npos);
  std::vector<uint8_t> unknown = good;
  unknown[12] = 7;
  reseal(unknown);
  EXPECT_NE(decode(unknown).find("unknown optimizer 7"), std::string::npos);
  std::vector<uint8_t> extra = good;
  extra.insert(extra.end() - 4, 0);
  reseal(extra);
  EXPECT_NE(decode(extra).find("unexpected bytes"), std::string::npos);
}

TEST(EmbeddingFormat, FileRoundTripsAndVersionOneStillLoads) {
  const std::vector<std::vector<uint8_t>> states = {state_of(SparseOptimizer::kSgd),
                                                    state_of(SparseOptimizer::kAdam, 9.0f)};
  const std::string file = encode_embedding_file(states);
  EXPECT_EQ(file.compare(0, 8, "PTEMBFIL"), 0);
  EXPECT_EQ(decode_embedding_file(file, 2, "f"), states);

  // Version 1, as trainer_embeddings.cc wrote it before: per table a u64 size and the state.
  std::vector<uint8_t> v1;
  for (const auto& s : states) {
    put<uint64_t>(v1, s.size());
    v1.insert(v1.end(), s.begin(), s.end());
  }
  EXPECT_EQ(decode_embedding_file(std::string(v1.begin(), v1.end()), 2, "old"), states);
}

TEST(EmbeddingFormat, AModelPicksItsTablesFromAFileOfMore) {
  // Tables 0, 1, 2 (HAN before issue 37 wrote one per featureless type); a model that reads
  // table 1 alone restores it from both file versions, and its own files read back too.
  const std::vector<std::vector<uint8_t>> states = {state_of(SparseOptimizer::kAdam, 1.0f, 0),
                                                    state_of(SparseOptimizer::kAdam, 2.0f, 1),
                                                    state_of(SparseOptimizer::kAdam, 3.0f, 2)};
  const std::string file = encode_embedding_file(states);
  EXPECT_EQ(store::decode_embedding_file_tables(file, {1}, "f"),
            (std::vector<std::vector<uint8_t>>{states[1]}));
  EXPECT_EQ(store::decode_embedding_file_tables(file, {2, 0}, "f"),
            (std::vector<std::vector<uint8_t>>{states[2], states[0]}));
  std::vector<uint8_t> v1;
  for (const auto& s : states) {
    put<uint64_t>(v1, s.size());
    v1.insert(v1.end(), s.begin(), s.end());
  }
  EXPECT_EQ(store::decode_embedding_file_tables(std::string(v1.begin(), v1.end()), {1}, "old"),
            (std::vector<std::vector<uint8_t>>{states[1]}));
  EXPECT_EQ(store::decode_embedding_file_tables(encode_embedding_file({states[1]}), {1}, "new"),
            (std::vector<std::vector<uint8_t>>{states[1]}));
  EXPECT_EQ(format_error_of([&] { store::decode_embedding_file_tables(file, {5}, "f"); }),
            "f: holds no state of embedding table 5 (this model's)");
  EXPECT_NE(
      format_error_of([&] { store::decode_embedding_file_tables(file.substr(0, 30), {1}, "f"); }),
      "");
}

TEST(EmbeddingFormat, BadFilesAreOneFormatErrorNamingTheSource) {
  const std::string file = encode_embedding_file({state_of(SparseOptimizer::kAdagrad)});
  auto decode = [](const std::string& bytes, size_t tables = 1) {
    return format_error_of([&] { decode_embedding_file(bytes, tables, "ck/embeddings-1.bin"); });
  };
  EXPECT_EQ(decode(file), "");
  EXPECT_NE(decode(file, 2).find("2"), std::string::npos);
  EXPECT_NE(decode("").find("ck/embeddings-1.bin: not an embedding file"), std::string::npos);
  EXPECT_NE(decode("garbage bytes, not a file").find("bad magic"), std::string::npos);
  for (size_t cut : {size_t{8}, size_t{14}, size_t{20}, file.size() - 1})
    EXPECT_NE(decode(file.substr(0, cut)).find("ck/embeddings-1.bin: "), std::string::npos) << cut;
  EXPECT_NE(decode(file + "x").find("bytes after"), std::string::npos);
  std::string future = file;
  future[8] = 3;  // the version, after the magic
  const std::string what = decode(future);
  EXPECT_NE(what.find("version 3"), std::string::npos) << what;
  EXPECT_NE(what.find("versions 1 and 2"), std::string::npos) << what;
}

}  // namespace
}  // namespace partita
