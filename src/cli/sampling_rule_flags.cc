#include "sampling_rule_flags.h"

#include "enum_option.h"
#include "partita/core/error.h"
#include "partita/train/train_options.h"

namespace partita::cli {

void add_sampling_rule_flags(CLI::App& app, SamplingRuleFlags* rule,
                             sample::LocalSamplerOptions* sampling) {
  app.add_flag("--temporal", rule->temporal,
               "Temporal sampling (node task; the partition needs edge_time and node_time): a "
               "seed at time t (its node_time) samples only in-edges with time <= t, and every "
               "later hop the in-edges no later than the time of the seed it descends from, so "
               "no block holds an edge from the seed's future. Every batch samples so (train: "
               "the training, validation and test batches); 1 rank and P ranks give the same "
               "blocks (docs/training.md, Time and weight on edges)");
  add_enum_option(app, "--temporal-strategy", &rule->strategy, train::temporal_strategy_names(),
                  "--temporal: which allowed in-edges a node takes: uniform (drawn as without "
                  "--temporal, among the allowed ones) or recent (the --fanouts most recent, no "
                  "draw)")
      ->each([rule](const std::string&) { rule->strategy_given = true; });
  app.add_flag("--temporal-strict", sampling->strict,
               "--temporal: allow only in-edges strictly earlier than the seed's time (< t "
               "instead of <= t)");
  add_enum_option(app, "--sample-weight", &sampling->weighting, train::sample_weight_names(),
                  "none, or edge_weight: draw in-neighbours with probability proportional to "
                  "the partition's edge_weight, without replacement (the partition needs "
                  "edge_weight; not with --temporal-strategy recent)");
}

sample::LocalSamplerOptions sampling_rule(const SamplingRuleFlags& rule,
                                          sample::LocalSamplerOptions sampling) {
  sampling.temporal = rule.temporal ? rule.strategy : sample::Temporal::kNone;
  return sampling;
}

void check_sampling_rule_flags(const SamplingRuleFlags& rule,
                               const sample::LocalSamplerOptions& sampling) {
  PARTITA_CHECK(rule.temporal || !sampling.strict, UsageError,
                "--temporal-strict: applies to --temporal sampling; pass --temporal too");
  PARTITA_CHECK(rule.temporal || !rule.strategy_given, UsageError,
                "--temporal-strategy: applies to --temporal sampling; pass --temporal too");
}

}  // namespace partita::cli
