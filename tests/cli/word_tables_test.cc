// The front ends' tables of parameter names (src/cli/flag_names.h, python/src/keyword_names.h)
// and the words they give a library error.
#include <gtest/gtest.h>

#include <string>

#include "flag_names.h"
#include "keyword_names.h"
#include "partita/core/parameter_error.h"

namespace partita {
namespace {

TEST(FlagNames, MapParametersToFlags) {
  EXPECT_EQ(cli::flag_name("batch_size"), "--batch-size");
  EXPECT_EQ(cli::flag_name("fanouts"), "--fanouts");
  EXPECT_EQ(cli::flag_name("cache_ratio"), "--cache-ratio");
  EXPECT_EQ(cli::flag_name("num_bases"), "--num-bases");
  EXPECT_EQ(cli::flag_name("eval_every"), "--eval-every");
  EXPECT_EQ(cli::flag_name("attention_dropout"), "--attention-dropout");
  // Fields whose flag is not their name with dashes.
  EXPECT_EQ(cli::flag_name("out_dir"), "--out");
  EXPECT_EQ(cli::flag_name("parts_dir"), "--parts");
  EXPECT_EQ(cli::flag_name("timeout_s"), "--timeout");
  EXPECT_EQ(cli::flag_name("shape"), "--hetero");
  EXPECT_EQ(cli::flag_name("reverse_relations"), "--no-reverse");
  EXPECT_EQ(cli::flag_name("cache_presample_batches"), "--cache-presample");
  EXPECT_EQ(cli::flag_name("hits_k"), "--metric hits@K");
  // Not parameters.
  EXPECT_EQ(cli::flag_name("no_such_parameter"), std::nullopt);
  EXPECT_EQ(cli::flag_name(""), std::nullopt);
  EXPECT_EQ(cli::flag_name("--batch-size"), std::nullopt);
}

TEST(FlagNames, TableIsSortedAndEveryFlagIsADoubleDashWord) {
  const auto& table = cli::flag_table();
  ASSERT_FALSE(table.empty());
  for (size_t i = 0; i < table.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(table[i - 1].first, table[i].first);
    }
    EXPECT_EQ(table[i].second.rfind("--", 0), 0u) << table[i].first;
    EXPECT_EQ(cli::flag_name(table[i].first), std::string(table[i].second));
  }
}

TEST(FlagNames, DescribeAParameterErrorInFlagWords) {
  const ParameterError e("train_fraction", "`train_fraction` x `nodes` gives no node");
  EXPECT_EQ(describe(e, cli::flag_name),
            "--train-fraction: --train-fraction x --nodes gives no node");
  EXPECT_EQ(cli::in_flag_words("`balance_train`/`balance_edges` apply to METIS only"),
            "--balance-train/--balance-edges apply to METIS only");
  EXPECT_EQ(cli::in_flag_words("run `partita launch -- <command>`"),
            "run `partita launch -- <command>`");
}

TEST(KeywordNames, MapParametersToKeywords) {
  EXPECT_EQ(python::keyword_name("batch_size"), "batch_size");
  EXPECT_EQ(python::keyword_name("prefetch"), "prefetch");
  EXPECT_EQ(python::keyword_name("timeout_s"), "timeout");
  EXPECT_EQ(python::keyword_name("model"), "kind");
  // The command line's parameters that Python does not take.
  EXPECT_EQ(python::keyword_name("epochs"), std::nullopt);
  EXPECT_EQ(python::keyword_name("servers"), std::nullopt);
  const auto& table = python::keyword_table();
  for (size_t i = 1; i < table.size(); ++i) EXPECT_LT(table[i - 1].first, table[i].first);
}

TEST(KeywordNames, DescribeAParameterErrorInKeywordWords) {
  EXPECT_EQ(describe(ParameterError("timeout_s", "must be > 0, got 0"), python::keyword_name),
            "timeout: must be > 0, got 0");
  EXPECT_EQ(python::in_keyword_words("`parts_dir` has 2 parts; pass `servers` 2"),
            "parts_dir has 2 parts; pass `servers` 2");
}

}  // namespace
}  // namespace partita
