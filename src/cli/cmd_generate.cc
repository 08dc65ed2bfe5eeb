// partita generate: synthetic dataset in the numpy layout.
#include <cstdio>
#include <memory>

#include "commands.h"
#include "partita/core/log.h"
#include "partita/data/generate.h"

namespace partita::cli {

Action add_generate_command(CLI::App& app) {
  auto options = std::make_shared<data::GenerateOptions>();
  app.description(
      "Write a synthetic node-classification graph in the Partita numpy layout "
      "(docs/dataset-format.md): a degree-corrected stochastic block model with power-law "
      "degrees, one community per class, Gaussian features around class centroids, and a "
      "random train/valid/test split (60/20/20 by default). The output depends only on the "
      "flags.");
  app.add_option("--out", options->out_dir, "Output directory (created)")->required();
  app.add_option("--nodes", options->nodes, "Number of nodes")->capture_default_str();
  app.add_option("--avg-degree", options->avg_degree, "Edges per node (edges = nodes x this)")
      ->capture_default_str();
  app.add_option("--feat-dim", options->feat_dim, "Feature dimension")->capture_default_str();
  app.add_option("--classes", options->classes, "Number of classes")->capture_default_str();
  app.add_option("--seed", options->seed, "Random seed")->capture_default_str();
  app.add_option("--homophily", options->homophily,
                 "Probability that an edge's destination is drawn inside its source's community, "
                 "in [0, 1]")
      ->capture_default_str();
  app.add_option("--power-law", options->power_law, "Exponent of the degree distribution (> 1)")
      ->capture_default_str();
  app.add_option("--feature-noise", options->feature_noise,
                 "Feature noise relative to half the distance between two class centroids (>= 0)")
      ->capture_default_str();
  app.add_option("--train-fraction", options->train_fraction,
                 "Share of the nodes in train_idx.npy, in (0, 1]")
      ->capture_default_str();
  app.add_option("--valid-fraction", options->valid_fraction,
                 "Share of the nodes in valid_idx.npy, in [0, 1]")
      ->capture_default_str();
  app.add_option("--test-fraction", options->test_fraction,
                 "Share of the nodes in test_idx.npy, in [0, 1]. The three fractions sum to at "
                 "most 1: nodes beyond the sum are in no split; when they sum to 1, every node "
                 "is in one (the last split asked for takes the rounding remainder)")
      ->capture_default_str();
  app.add_option("--threads", options->threads, "Threads (0: all cores)")->capture_default_str();
  return [options] {
    data::GenerateStats stats = data::generate_synthetic(*options);
    std::printf("generated %s: %lld nodes, %lld edges, %s written in %.2f s\n",
                options->out_dir.c_str(), static_cast<long long>(stats.nodes),
                static_cast<long long>(stats.edges),
                format_bytes(static_cast<double>(stats.bytes_written)).c_str(), stats.seconds);
    return 0;
  };
}

}  // namespace partita::cli
