// ParameterError's message contract and the renaming a front end applies to it.
#include "partita/core/parameter_error.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

namespace partita {
namespace {

// A front end's table in miniature: two parameters with flags, one named differently.
std::optional<std::string> flag(std::string_view name) {
  static const std::map<std::string, std::string, std::less<>> table = {
      {"batch_size", "--batch-size"}, {"fanouts", "--fanouts"}, {"out_dir", "--out"}};
  auto it = table.find(name);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

TEST(ParameterError, WhatIsParameterColonDetail) {
  const ParameterError e("batch_size", "must be >= 1, got 0");
  EXPECT_EQ(e.parameter(), "batch_size");
  EXPECT_EQ(e.detail(), "must be >= 1, got 0");
  EXPECT_STREQ(e.what(), "batch_size: must be >= 1, got 0");
}

TEST(ParameterError, IsAUsageError) {
  try {
    throw ParameterError("fanouts", "empty");
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "fanouts: empty");
  }
}

TEST(ParameterError, CheckMacroFormatsOnlyWhenTheConditionFails) {
  EXPECT_NO_THROW(PARTITA_CHECK_PARAM(1 + 1 == 2, "layers", "never {}", 1));
  try {
    PARTITA_CHECK_PARAM(false, "layers", "must be >= {}, got {}", 1, 0);
    ADD_FAILURE() << "no throw";
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.parameter(), "layers");
    EXPECT_EQ(e.detail(), "must be >= 1, got 0");
  }
}

TEST(RenameParameters, RenamesKnownBackquotedNamesOnly) {
  EXPECT_EQ(rename_parameters("no quotes at all", flag), "no quotes at all");
  EXPECT_EQ(rename_parameters("`batch_size` and `fanouts`", flag), "--batch-size and --fanouts");
  EXPECT_EQ(rename_parameters("write to `out_dir`.", flag), "write to --out.");
  // Unknown names and other backquoted text keep their backquotes.
  EXPECT_EQ(rename_parameters("run `partita launch -- x` or `layers`", flag),
            "run `partita launch -- x` or `layers`");
  // A lone backquote is text.
  EXPECT_EQ(rename_parameters("a ` b `fanouts", flag), "a ` b `fanouts");
  EXPECT_EQ(rename_parameters("`fanouts` then `", flag), "--fanouts then `");
  EXPECT_EQ(rename_parameters("``", flag), "``");
  EXPECT_EQ(rename_parameters("", flag), "");
}

TEST(RenameParameters, UnquotedNamesStay) {
  EXPECT_EQ(rename_parameters("batch_size must be >= 1", flag), "batch_size must be >= 1");
}

TEST(Describe, RenamesTheParameterAndTheDetail) {
  EXPECT_EQ(describe(ParameterError("batch_size", "must be >= 1, got 0"), flag),
            "--batch-size: must be >= 1, got 0");
  EXPECT_EQ(describe(ParameterError("fanouts", "3 hops but `layers` is 2; see `batch_size`"), flag),
            "--fanouts: 3 hops but `layers` is 2; see --batch-size");
  // A parameter the namer does not know is shown as the library names it.
  EXPECT_EQ(describe(ParameterError("layers", "must be >= 1"), flag), "layers: must be >= 1");
  // With a namer that knows nothing, describe() is what().
  const auto none = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
  const ParameterError e("out_dir", "`out_dir` is required");
  EXPECT_EQ(describe(e, none), e.what());
}

}  // namespace
}  // namespace partita
