#pragma once
// Editing a written partition in tests, and expecting `info --verify` to refuse the edit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "partita/core/error.h"
#include "partita/core/npy.h"
#include "partita/partition/format.h"

namespace partita::testing {

// Rewrites array `rel` of the partition in `dir` through `edit`, then makes every checksum in
// partita.json right again (so that --verify gets to the values).
template <class T, class Edit>
void rewrite_part_array(const std::string& dir, const std::string& rel, Edit edit) {
  std::vector<T> v = read_npy_vector<T>(dir + "/" + rel);
  edit(v);
  write_npy<T>(dir + "/" + rel, v);
  partition::PartitionMeta m = partition::read_meta(dir);
  for (partition::FileEntry& f : m.files) f.crc32 = crc32_file(dir + "/" + f.path);
  partition::write_meta(dir, m);
}

// `verify_partition(dir)` throws a FormatError whose text holds `message`.
inline void expect_verify_refuses(const std::string& dir, const std::string& message) {
  try {
    partition::verify_partition(dir, 1);
    ADD_FAILURE() << "passed --verify; expected " << message;
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

}  // namespace partita::testing
