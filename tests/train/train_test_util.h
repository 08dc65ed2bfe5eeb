#pragma once
// Helpers shared by the trainer tests.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "partita/data/generate.h"
#include "partita/nn/gnn_model.h"
#include "partita/partition/partition.h"

namespace partita::testing {

// Every parameter of `model`, flattened in order (to compare weights across runs or ranks).
inline std::vector<float> flat_parameters(nn::GnnModel& model) {
  torch::NoGradGuard no_grad;
  std::vector<float> out;
  for (const auto& p : model.parameters()) {
    torch::Tensor t = p.detach().reshape(-1).contiguous();
    out.insert(out.end(), t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  }
  return out;
}

// The small graph of the in-process training tests: 1500 synthetic nodes (12 features, 4
// classes) under `dir`/ds, partitioned at random into each of `part_counts` parts as
// `dir`/p<parts>.
inline void make_small_partitions(const std::string& dir, const std::vector<int>& part_counts,
                                  int64_t edge_feat_dim = 0) {
  data::GenerateOptions g;
  g.edge_feat_dim = edge_feat_dim;
  g.nodes = 1500;
  g.avg_degree = 8;
  g.feat_dim = 12;
  g.classes = 4;
  g.seed = 5;
  g.threads = 1;
  g.out_dir = dir + "/ds";
  data::generate_synthetic(g);
  for (int parts : part_counts) {
    partition::PartitionOptions p;
    p.num_parts = parts;
    p.method = partition::Method::kRandom;
    p.seed = 3;
    p.threads = 1;
    p.out_dir = dir + "/p" + std::to_string(parts);
    partition::run_partition(g.out_dir, data::LoadOptions{}, p);
  }
}

}  // namespace partita::testing
