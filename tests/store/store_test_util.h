#pragma once
// Helpers shared by the in-process and the MPI distributed-equality checks.
#include <string>
#include <vector>

#include "partita/core/npy.h"
#include "partita/sample/block_builder.h"

namespace partita::testing {

inline std::vector<int64_t> read_node_map(const std::string& parts_dir) {
  return read_npy_vector<int64_t>(parts_dir + "/node_map.npy");
}

inline std::vector<int64_t> map_ids(const std::vector<int64_t>& ids,
                                    const std::vector<int64_t>& map) {
  std::vector<int64_t> out(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) out[i] = map[ids[i]];
  return out;
}

// Empty when `got` (partition ids) mapped through node_map equals `want` (original ids):
// same seeds (and seed times), same blocks (structure, src nodes and, temporal, src times;
// typed, relations), same input nodes.
inline std::string compare_batches(const sample::SampledBatch& got,
                                   const sample::SampledBatch& want,
                                   const std::vector<int64_t>& node_map) {
  if (map_ids(got.seeds, node_map) != want.seeds) return "seeds differ";
  if (got.seed_times != want.seed_times) return "seed times differ";
  if (got.blocks.size() != want.blocks.size()) return "block counts differ";
  for (size_t l = 0; l < got.blocks.size(); ++l) {
    const sample::Block& a = got.blocks[l];
    const sample::Block& b = want.blocks[l];
    const std::string at = "block " + std::to_string(l) + ": ";
    if (a.num_dst != b.num_dst || a.num_src != b.num_src) return at + "sizes differ";
    if (a.indptr != b.indptr) return at + "indptr differs";
    if (a.indices != b.indices) return at + "indices differ";
    if (map_ids(a.src_nodes, node_map) != b.src_nodes) return at + "src nodes differ";
    if (a.src_times != b.src_times) return at + "src times differ";  // temporal sampling
    if (a.etypes != b.etypes) return at + "relations differ";        // typed graphs
  }
  if (map_ids(got.input_nodes, node_map) != want.input_nodes) return "input nodes differ";
  return "";
}

}  // namespace partita::testing
