// A link step's exclusion on a fetched batch (loader/batch_exclusion.h): the edge features
// of the removed edges leave with them, the others stay aligned with their edges.
#include "partita/loader/batch_exclusion.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace partita::loader {
namespace {

// A block over dst {10, 11} and src {10, 11, 12}: 10 <- 11, 12 and 11 <- 10, 12, the edges'
// ids first_id + 0..3.
sample::Block two_rows(int64_t first_id) {
  sample::Block b;
  b.num_dst = 2;
  b.num_src = 3;
  b.indptr = {0, 2, 4};
  b.indices = {1, 2, 0, 2};
  b.src_nodes = {10, 11, 12};
  b.edge_ids = {first_id, first_id + 1, first_id + 2, first_id + 3};
  return b;
}

// Each row: its edge id as 8 bytes, then the id + 1000 as 8 more.
std::vector<uint8_t> rows_of(const std::vector<int64_t>& ids) {
  std::vector<uint8_t> rows(ids.size() * 16);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t row[2] = {ids[i], ids[i] + 1000};
    std::memcpy(rows.data() + 16 * i, row, 16);
  }
  return rows;
}

std::vector<int64_t> first_words(const std::vector<uint8_t>& rows) {
  std::vector<int64_t> out(rows.size() / 16);
  for (size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], rows.data() + 16 * i, 8);
  return out;
}

TEST(BatchExclusion, EdgeFeaturesFollowTheirEdges) {
  Batch batch;
  batch.sampled.blocks = {two_rows(100), two_rows(200)};
  batch.edge_features = rows_of({100, 101, 102, 103, 200, 201, 202, 203});
  const std::vector<int64_t> pair = {10, 11};  // 11 -> 10 and, reversed, 10 -> 11
  EXPECT_EQ(exclude_batch_edges(batch, pair, sample::Exclude::kReverse), 4);
  for (const sample::Block& b : batch.sampled.blocks)
    EXPECT_EQ(b.indices, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(first_words(batch.edge_features), (std::vector<int64_t>{101, 103, 201, 203}));
  EXPECT_EQ(rows_of({101, 103, 201, 203}), batch.edge_features);  // whole rows moved
}

TEST(BatchExclusion, RepeatedEdgesAndNothingRemoved) {
  Batch batch;
  sample::Block b = two_rows(0);
  b.indices = {1, 1, 0, 2};  // 11 -> 10 sampled twice (with replacement): both go
  b.edge_ids = {7, 7, 8, 9};
  batch.sampled.blocks = {b};
  batch.edge_features = rows_of({7, 7, 8, 9});
  EXPECT_EQ(exclude_batch_edges(batch, std::vector<int64_t>{11, 10}, sample::Exclude::kSelf), 2);
  EXPECT_EQ(batch.edge_features, rows_of({8, 9}));
  // No pairs: nothing changes.
  EXPECT_EQ(exclude_batch_edges(batch, {}, sample::Exclude::kReverse), 0);
  EXPECT_EQ(batch.edge_features, rows_of({8, 9}));
}

TEST(BatchExclusion, WithoutEdgeFeaturesOnlyTheBlocksChange) {
  Batch batch;
  batch.sampled.blocks = {two_rows(0)};
  EXPECT_EQ(exclude_batch_edges(batch, std::vector<int64_t>{10, 11}, sample::Exclude::kReverse), 2);
  EXPECT_TRUE(batch.edge_features.empty());
  EXPECT_EQ(batch.sampled.blocks[0].edge_ids, (std::vector<int64_t>{1, 3}));
}

}  // namespace
}  // namespace partita::loader
