// libFuzzer target: the OGB CSV parsers (src/data/ogb_reader.cc) on decompressed text.
// Input layout, so that seeds stay readable text:
//   byte 0   which file: 'c' a count (num-node-list), 'l' node-label, 'e' edge,
//            'f' node-feat, anything else a split's id list (train/valid/test)
//   byte 1   the node count the file is checked against: its value mod 16 (features: at
//            least 1, as read_ogb_dataset guarantees); edges: the claimed edge count * 1000
//   byte 2   block size: text arrives in blocks of about 1 + (value mod 64) bytes
//   rest     the CSV text
// Each input is parsed twice, in small blocks and in one block; results and error messages
// must be identical (block boundaries must not matter). Accepted output is checked too:
// labels in range, ids sorted, unique and in range, features finite and exactly sized.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "gz_reader.h"
#include "partita/core/error.h"
#include "readers.h"

namespace {

using partita::fuzz::fuzz_require;
namespace data = partita::data;

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Parses `text` as file `kind`; returns a fingerprint of the result.
std::string parse(char kind, int64_t nodes, data::LineSource& text) {
  switch (kind) {
    case 'c': {
      const int64_t count = data::parse_ogb_count(text);
      fuzz_require(count >= 0, "counts are non-negative");
      return std::to_string(count);
    }
    case 'l': {
      const std::vector<int64_t> labels = data::parse_ogb_labels(text);
      for (int64_t v : labels)
        fuzz_require(v >= 0 && v <= data::kMaxLabel, "labels lie in [0, kMaxLabel]");
      return bytes_of(labels);
    }
    case 'e': {
      const std::vector<int64_t> pairs = data::parse_ogb_edges(text, nodes * 1000);
      fuzz_require(pairs.size() % 2 == 0, "edges come in pairs");
      return bytes_of(pairs);
    }
    case 'f': {
      const data::FeatureMatrix f = data::parse_ogb_features(text, nodes, "fuzz-count");
      fuzz_require(f.rows() == nodes && f.cols() >= 1, "one row per node, at least one column");
      std::vector<float> values(f.data(), f.data() + f.rows() * f.cols());
      for (float v : values) fuzz_require(std::isfinite(v), "features are finite");
      return std::to_string(f.cols()) + ":" + bytes_of(values);
    }
    default: {
      const std::vector<int64_t> ids = data::parse_ogb_ids(text, nodes);
      for (size_t i = 0; i < ids.size(); ++i) {
        fuzz_require(ids[i] >= 0 && ids[i] < nodes, "split ids lie in [0, num_nodes)");
        fuzz_require(i == 0 || ids[i - 1] < ids[i], "split ids are sorted and unique");
      }
      return bytes_of(ids);
    }
  }
}

std::string outcome(char kind, int64_t nodes, const char* text, size_t size, size_t block) {
  data::MemoryLineReader reader("fuzz.csv", text, size, block);
  try {
    return "ok " + parse(kind, nodes, reader);
  } catch (const partita::Error& e) {
    return std::string("error ") + e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t size) {
  if (size < 3) return 0;
  const char kind = static_cast<char>(input[0]);
  int64_t nodes = input[1] % 16;
  if (kind == 'f' && nodes == 0) nodes = 1;
  const size_t block = 1 + input[2] % 64;
  const char* text = reinterpret_cast<const char*>(input + 3);
  const size_t text_size = size - 3;
  const std::string small = outcome(kind, nodes, text, text_size, block);
  const std::string whole = outcome(kind, nodes, text, text_size, text_size + 1);
  fuzz_require(small == whole, "the result does not depend on block boundaries",
               "blocks of " + std::to_string(block) + ": " + small + "\none block: " + whole);
  return 0;
}
