#pragma once
// Tiny dataset writers and error-message assertions shared by the data/ tests.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "helpers/test_paths.h"
#include "partita/core/error.h"
#include "partita/core/npy.h"
#include "partita/data/dataset.h"

namespace partita::data::testing {

using partita::testing::TempDir;
using partita::testing::write_file;
using partita::testing::write_gz;

// The text of each file of an OGB raw-layout dataset (gzip-compressed when written).
struct OgbText {
  std::string num_nodes = "4\n";
  std::string num_edges = "5\n";
  std::string edges = "0,1\n1,2\n2,2\n0,1\n3,0\n";                 // one self loop, one duplicate
  std::string feats = "0.5,1,2\r\n-2.5,1e-3,0\r\n3,4,5\r\n6,7,8";  // CRLF, no final newline
  std::string labels = "0\n1.0\n2\n1\n\n";                         // integral float, blank end
  std::map<std::string, std::vector<std::string>> splits = {{"only", {"3\n0\n", "1\n", "2"}}};
};

inline void write_ogb(const std::string& dir, const OgbText& t) {
  write_gz(dir + "/raw/num-node-list.csv.gz", t.num_nodes);
  write_gz(dir + "/raw/num-edge-list.csv.gz", t.num_edges);
  write_gz(dir + "/raw/edge.csv.gz", t.edges);
  write_gz(dir + "/raw/node-feat.csv.gz", t.feats);
  write_gz(dir + "/raw/node-label.csv.gz", t.labels);
  for (const auto& [name, files] : t.splits) {
    const char* names[] = {"train", "valid", "test"};
    for (int i = 0; i < 3; ++i)
      write_gz(dir + "/split/" + name + "/" + names[i] + ".csv.gz", files[i]);
  }
}

// The same 4-node dataset in the numpy layout.
struct NumpyArrays {
  std::vector<int64_t> edges = {0, 1, 1, 2, 2, 2, 0, 1, 3, 0};
  std::vector<float> feats = {0.5f, 1, 2, -2.5f, 1e-3f, 0, 3, 4, 5, 6, 7, 8};
  int64_t feat_dim = 3;
  std::vector<int64_t> labels = {0, 1, 2, 1};
  std::vector<int64_t> train = {3, 0}, valid = {1}, test = {2};
};

inline void write_numpy(const std::string& dir, const NumpyArrays& a) {
  write_npy<int64_t>(dir + "/edges.npy", ArrayView<const int64_t>(a.edges),
                     {static_cast<int64_t>(a.edges.size() / 2), 2});
  write_npy<float>(dir + "/feat.npy", ArrayView<const float>(a.feats),
                   {static_cast<int64_t>(a.feats.size()) / a.feat_dim, a.feat_dim});
  write_npy<int64_t>(dir + "/label.npy", a.labels);
  write_npy<int64_t>(dir + "/train_idx.npy", a.train);
  write_npy<int64_t>(dir + "/valid_idx.npy", a.valid);
  write_npy<int64_t>(dir + "/test_idx.npy", a.test);
}

// Loads `dir` expecting an exception of type Err whose message starts with `path` + ": "
// and contains every string of `parts`.
template <class Err>
void expect_load_error(const std::string& dir, const std::string& path,
                       const std::vector<std::string>& parts, LoadOptions options = {}) {
  try {
    load_dataset(dir, options);
    ADD_FAILURE() << "no error; expected one naming " << path;
  } catch (const Err& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
    for (const auto& p : parts) EXPECT_NE(what.find(p), std::string::npos) << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

}  // namespace partita::data::testing
