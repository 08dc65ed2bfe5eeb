#pragma once
// Small hand-made and random blocks for the nn tests.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "partita/sample/block_builder.h"

namespace partita::nn::testing {

// The torch thread count the fixtures run at: $PARTITA_TEST_TORCH_THREADS, 1 when unset
// (CTest runs nn_test twice: plain, and as t2.* with 2 threads; tests/nn/CMakeLists.txt).
inline int test_torch_threads() {
  const char* env = std::getenv("PARTITA_TEST_TORCH_THREADS");
  const int n = env != nullptr ? std::atoi(env) : 1;
  return n >= 1 ? n : 1;
}

// 3 dst, 5 src: dst0 <- {1, 3}, dst1 <- {0, 3, 4}, dst2 <- {} (no in-edges).
inline sample::Block tiny_block() {
  sample::Block b;
  b.num_dst = 3;
  b.num_src = 5;
  b.indptr = {0, 2, 5, 5};
  b.indices = {1, 3, 0, 3, 4};
  b.src_nodes = {10, 11, 12, 13, 14};
  return b;
}

// Each dst gets `fanout` src ids drawn uniformly from [0, num_src).
inline sample::Block random_block(int64_t num_dst, int64_t num_src, int64_t fanout,
                                  std::mt19937_64& rng) {
  sample::Block b;
  b.num_dst = num_dst;
  b.num_src = num_src;
  b.indptr.push_back(0);
  std::uniform_int_distribution<int64_t> pick(0, num_src - 1);
  for (int64_t i = 0; i < num_dst; ++i) {
    for (int64_t k = 0; k < fanout; ++k) b.indices.push_back(pick(rng));
    b.indptr.push_back(static_cast<int64_t>(b.indices.size()));
  }
  for (int64_t i = 0; i < num_src; ++i) b.src_nodes.push_back(100 + i);
  return b;
}

// A typed block: each dst gets, for each relation r < num_relations, a random count in
// [0, max_per_relation] of src ids drawn uniformly (duplicates possible), listed by
// relation; relations in `empty` get no edges at all, and dst rows whose id is a multiple of
// 5 get none either. num_relations == 1 gives a single-relation block.
inline sample::Block random_typed_block(int64_t num_dst, int64_t num_src, int num_relations,
                                        int64_t max_per_relation, std::vector<int> empty,
                                        std::mt19937_64& rng) {
  sample::Block b;
  b.num_dst = num_dst;
  b.num_src = num_src;
  b.indptr.push_back(0);
  std::uniform_int_distribution<int64_t> pick(0, num_src - 1);
  std::uniform_int_distribution<int64_t> count(0, max_per_relation);
  for (int64_t i = 0; i < num_dst; ++i) {
    for (int r = 0; r < num_relations; ++r) {
      const bool none = i % 5 == 0 || std::find(empty.begin(), empty.end(), r) != empty.end();
      const int64_t n = none ? 0 : count(rng);
      for (int64_t k = 0; k < n; ++k) {
        b.indices.push_back(pick(rng));
        b.etypes.push_back(r);
      }
    }
    b.indptr.push_back(static_cast<int64_t>(b.indices.size()));
  }
  for (int64_t i = 0; i < num_src; ++i) b.src_nodes.push_back(100 + i);
  return b;
}

}  // namespace partita::nn::testing
