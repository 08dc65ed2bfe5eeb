// libFuzzer target: the partita.json loader. The input is the text of partita.json, parsed
// and cross-checked by parse_meta exactly as read_meta does after reading the file.
// Properties of accepted metadata: meta_to_json writes text that parses back to the same
// metadata, owner() agrees with the ranges, and file() finds every listed file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "partita/core/error.h"
#include "partita/partition/format.h"

using partita::fuzz::fuzz_require;
using partita::partition::PartitionMeta;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  PartitionMeta m;
  try {
    m = partita::partition::parse_meta(text, "fuzz/partita.json");
  } catch (const partita::Error&) {
    return 0;  // rejected, as it should be
  }

  const std::string written = partita::partition::meta_to_json(m);
  try {
    const PartitionMeta again = partita::partition::parse_meta(written, "again/partita.json");
    fuzz_require(partita::partition::meta_to_json(again) == written,
                 "metadata survives a write/read round trip", written);
  } catch (const partita::Error& e) {
    fuzz_require(false, "metadata written by meta_to_json is read back",
                 std::string(e.what()) + "\n" + written);
  }

  for (int p = 0; p < m.num_parts; ++p) {
    if (m.part_nodes(p) == 0) continue;
    fuzz_require(m.owner(m.ranges[p]) == p && m.owner(m.ranges[p + 1] - 1) == p,
                 "owner() maps a part's first and last id to the part");
  }
  for (const auto& f : m.files)
    fuzz_require(m.file(f.path).path == f.path, "file() finds every listed file", f.path);
  return 0;
}
