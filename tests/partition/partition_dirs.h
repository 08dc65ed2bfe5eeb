#pragma once
// Comparing partition directories in tests: what two writers (threads, ranks, processes)
// must write alike.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "helpers/test_paths.h"

namespace partita::testing {

// partita.json without the fields that may differ between runs and writers (timings and
// memory figures).
inline nlohmann::json stable_meta(const std::string& dir) {
  nlohmann::json j = nlohmann::json::parse(read_file(dir + "/partita.json"));
  j["summary"].erase("phase_seconds");
  j["summary"].erase("peak_rss_bytes");
  j["summary"].erase("rank_peak_rss_bytes");
  return j;
}

// Every regular file below `dir`, as paths relative to it.
inline std::set<std::string> files_under(const std::string& dir) {
  namespace fs = std::filesystem;
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
  return out;
}

// The same files, byte for byte, but for partita.json, equal as stable_meta.
inline void expect_same_directory(const std::string& want, const std::string& got) {
  const std::set<std::string> files = files_under(want);
  ASSERT_EQ(files, files_under(got));
  for (const std::string& f : files) {
    if (f == "partita.json") continue;
    EXPECT_TRUE(read_file(want + "/" + f) == read_file(got + "/" + f)) << f << " differs";
  }
  EXPECT_EQ(stable_meta(want), stable_meta(got));
}

}  // namespace partita::testing
