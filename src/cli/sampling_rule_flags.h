#pragma once
// --temporal, --temporal-strategy, --temporal-strict and --sample-weight (train,
// sample-bench): which in-edges a node may sample, by time and by weight. Defined once here,
// so that both commands take the same names, help texts and checks.
#include <CLI/CLI.hpp>

#include "partita/sample/local_sampler.h"

namespace partita::cli {

// The flags' values that are not fields of sample::LocalSamplerOptions yet: the strategy
// counts only with --temporal (sampling_rule folds both into LocalSamplerOptions::temporal).
struct SamplingRuleFlags {
  bool temporal = false;                                   // --temporal
  sample::Temporal strategy = sample::Temporal::kUniform;  // --temporal-strategy
  bool strategy_given = false;                             // --temporal-strategy was passed
};

// Adds the four flags to `app`: --temporal and --temporal-strategy onto `rule`,
// --temporal-strict and --sample-weight onto `sampling` (strict, weighting). A strategy or
// weighting that is not one of its names is refused at parsing.
void add_sampling_rule_flags(CLI::App& app, SamplingRuleFlags* rule,
                             sample::LocalSamplerOptions* sampling);

// `sampling` with the rule's temporal strategy (Temporal::kNone without --temporal).
sample::LocalSamplerOptions sampling_rule(const SamplingRuleFlags& rule,
                                          sample::LocalSamplerOptions sampling);

// The checks of the flags among themselves: UsageError for --temporal-strict or
// --temporal-strategy without --temporal. The rest (a strategy against the weighting, the
// partition's arrays) is the library's: train::check_sampling_rule, sample::check_sampling_data.
void check_sampling_rule_flags(const SamplingRuleFlags& rule,
                               const sample::LocalSamplerOptions& sampling);

}  // namespace partita::cli
