// partita generate: synthetic dataset in the numpy layout, or (--hetero mag) a mag-shaped
// heterogeneous one in the numpy heterogeneous layout.
#include <cstdio>
#include <memory>

#include "commands.h"
#include "partita/core/error.h"
#include "partita/core/log.h"
#include "partita/data/generate.h"

namespace partita::cli {

Action add_generate_command(CLI::App& app) {
  auto options = std::make_shared<data::GenerateOptions>();
  auto hetero = std::make_shared<std::string>();
  app.description(
      "Write a synthetic node-classification graph in the Partita numpy layout "
      "(docs/dataset-format.md): a degree-corrected stochastic block model with power-law "
      "degrees, one community per class, Gaussian features around class centroids, and a "
      "random train/valid/test split (60/20/20 by default). With --hetero mag: a graph shaped "
      "like ogbn-mag (author, field_of_study, institution, paper; affiliated_with, writes, "
      "cites, has_topic in its proportions; features on papers only; classes on papers) in the "
      "numpy heterogeneous layout. The output depends only on the flags.");
  app.add_option("--out", options->out_dir, "Output directory (created)")->required();
  app.add_option("--hetero", *hetero,
                 "Write a heterogeneous graph of this shape instead (mag: ogbn-mag's types, "
                 "relations and proportions; defaults then: --nodes 100000, --feat-dim 128, "
                 "--classes 349, --homophily 0.8; --avg-degree does not apply)");
  app.add_option("--nodes", options->nodes, "Number of nodes")->capture_default_str();
  CLI::Option* avg_degree =
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
  return [options, hetero, &app, avg_degree] {
    if (!hetero->empty()) {
      PARTITA_CHECK(avg_degree->count() == 0, UsageError,
                    "--avg-degree: does not apply with --hetero (edges follow ogbn-mag's "
                    "proportions)");
      data::HeteroGenerateOptions h;
      h.shape = *hetero;
      h.out_dir = options->out_dir;
      h.seed = options->seed;
      h.threads = options->threads;
      h.power_law = options->power_law;
      h.feature_noise = options->feature_noise;
      h.train_fraction = options->train_fraction;
      h.valid_fraction = options->valid_fraction;
      h.test_fraction = options->test_fraction;
      // Flags given override the shape's own defaults.
      if (app.count("--nodes") > 0) h.nodes = options->nodes;
      if (app.count("--feat-dim") > 0) h.feat_dim = options->feat_dim;
      if (app.count("--classes") > 0) h.classes = options->classes;
      if (app.count("--homophily") > 0) h.homophily = options->homophily;
      data::HeteroGenerateStats stats = data::generate_hetero(h);
      int64_t edges = 0;
      for (int64_t e : stats.relation_edges) edges += e;
      int64_t nodes = 0;
      for (int64_t n : stats.type_counts) nodes += n;
      std::printf(
          "generated %s: %lld nodes of %zu types, %lld edges of %zu relations, %s written "
          "in %.2f s\n",
          h.out_dir.c_str(), static_cast<long long>(nodes), stats.type_counts.size(),
          static_cast<long long>(edges), stats.relation_edges.size(),
          format_bytes(static_cast<double>(stats.bytes_written)).c_str(), stats.seconds);
      return 0;
    }
    data::GenerateStats stats = data::generate_synthetic(*options);
    std::printf("generated %s: %lld nodes, %lld edges, %s written in %.2f s\n",
                options->out_dir.c_str(), static_cast<long long>(stats.nodes),
                static_cast<long long>(stats.edges),
                format_bytes(static_cast<double>(stats.bytes_written)).c_str(), stats.seconds);
    return 0;
  };
}

}  // namespace partita::cli
