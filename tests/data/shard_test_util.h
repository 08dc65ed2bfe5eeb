#pragma once
// The union of every rank's share of a dataset (data/shard.h), in a form tests compare
// exactly: listed edges as a sorted multiset, labels and split ids in id order, feature rows
// as bytes. Shared by the data/ shard tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "partita/core/npy.h"
#include "partita/data/shard.h"

namespace partita::data::testing {

struct ShardUnion {
  int64_t num_nodes = 0, num_classes = 0, input_edges_total = 0;
  std::vector<std::tuple<int64_t, int64_t, int32_t>> edges;  // (src, dst, relation), sorted
  std::vector<int64_t> labels;
  std::vector<int64_t> train, valid, test;
  DType feature_dtype = DType::kFloat32;
  int64_t feature_dim = 0;
  std::vector<unsigned char> features;                    // homogeneous: all rows
  std::vector<std::vector<unsigned char>> type_features;  // typed: per type
  std::vector<int64_t> edge_split_train;                  // numpy edge split: train pairs, in order
};

// Reads the `ranks` shares of `dir` and joins them, checking what every share must agree on
// (counts, blocks covering the nodes in order).
inline ShardUnion union_of_shares(const std::string& dir, int ranks) {
  ShardUnion u;
  for (int r = 0; r < ranks; ++r) {
    DatasetShard s = read_dataset_shard(dir, r, ranks);
    if (r == 0) {
      u.num_nodes = s.num_nodes;
      u.num_classes = s.num_classes;
      u.input_edges_total = s.input_edges_total;
      u.feature_dtype = s.features.dtype;
      u.feature_dim = s.features.dim;
      u.type_features.resize(s.type_features.size());
    }
    EXPECT_EQ(s.num_nodes, u.num_nodes);
    EXPECT_EQ(s.num_classes, u.num_classes);
    EXPECT_EQ(s.input_edges_total, u.input_edges_total);
    EXPECT_EQ(s.node_begin, static_cast<int64_t>(u.labels.size()));
    EXPECT_EQ(s.labels.size(), static_cast<size_t>(s.node_end - s.node_begin));
    EXPECT_EQ(s.src.size(), s.dst.size());
    const bool typed = s.hetero.has_value();
    EXPECT_EQ(s.edge_relation.size(), typed ? s.src.size() : 0u);
    for (size_t i = 0; i < s.src.size(); ++i)
      u.edges.emplace_back(s.src[i], s.dst[i], typed ? s.edge_relation[i] : 0);
    u.labels.insert(u.labels.end(), s.labels.begin(), s.labels.end());
    u.train.insert(u.train.end(), s.train_idx.begin(), s.train_idx.end());
    u.valid.insert(u.valid.end(), s.valid_idx.begin(), s.valid_idx.end());
    u.test.insert(u.test.end(), s.test_idx.begin(), s.test_idx.end());
    if (s.edge_split)
      u.edge_split_train.insert(u.edge_split_train.end(), s.edge_split->train.begin(),
                                s.edge_split->train.end());
    // Features: each rank reads the rows of its block (typed: the block's part of each type).
    if (!typed) {
      const size_t row = static_cast<size_t>(s.features.dim) * dtype_size(s.features.dtype);
      std::vector<unsigned char> rows(row * static_cast<size_t>(s.node_end - s.node_begin));
      s.features.read(s.node_begin, s.node_end, rows.data());
      u.features.insert(u.features.end(), rows.begin(), rows.end());
    } else {
      for (size_t t = 0; t < s.type_features.size(); ++t) {
        const ShardFeatures& f = s.type_features[t];
        if (f.dim == 0) continue;
        const NodeType& type = s.hetero->node_types[t];
        const int64_t b = std::clamp(s.node_begin - type.offset, int64_t{0}, type.count);
        const int64_t e = std::clamp(s.node_end - type.offset, int64_t{0}, type.count);
        const size_t row = static_cast<size_t>(f.dim) * dtype_size(f.dtype);
        std::vector<unsigned char> rows(row * static_cast<size_t>(e - b));
        f.read(b, e, rows.data());
        u.type_features[t].insert(u.type_features[t].end(), rows.begin(), rows.end());
      }
    }
  }
  EXPECT_EQ(static_cast<int64_t>(u.labels.size()), u.num_nodes);
  EXPECT_EQ(static_cast<int64_t>(u.edges.size()), u.input_edges_total);
  std::sort(u.edges.begin(), u.edges.end());
  return u;
}

inline void expect_same_union(const ShardUnion& a, const ShardUnion& b) {
  EXPECT_EQ(a.num_nodes, b.num_nodes);
  EXPECT_EQ(a.num_classes, b.num_classes);
  EXPECT_EQ(a.input_edges_total, b.input_edges_total);
  EXPECT_TRUE(a.edges == b.edges);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.valid, b.valid);
  EXPECT_EQ(a.test, b.test);
  EXPECT_EQ(a.feature_dim, b.feature_dim);
  EXPECT_TRUE(a.features == b.features);
  EXPECT_TRUE(a.type_features == b.type_features);
}

// Calls `read` expecting an exception of type Err whose message starts with `path` + ": "
// and contains every string of `parts`.
template <class Err, class Read>
void expect_error(const Read& read, const std::string& path,
                  const std::vector<std::string>& parts) {
  try {
    read();
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
