// The class count of a dataset (data/class_count.h): implied from the labels, refused when a
// stray label would make most classes empty, stated by the caller or by the layout.
#include "partita/data/class_count.h"

#include <gtest/gtest.h>

#include "data_test_util.h"
#include "partita/core/parameter_error.h"

namespace partita::data::testing {
namespace {

ClassCountInput input_of(const std::vector<int64_t>& labels, int64_t stated = 0,
                         int64_t given = 0) {
  ClassCountInput in{"ds", {}, stated, given};
  in.census.add(labels);
  return in;
}

std::string error_of(const ClassCountInput& in) {
  try {
    resolve_num_classes(in);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ClassCensus, CountsDistinctClassesAndMerges) {
  ClassCensus a;
  a.add(std::vector<int64_t>{2, -1, 0, 2, 5});
  EXPECT_EQ(a.max_label(), 5);
  EXPECT_EQ(a.present(), 3);
  EXPECT_EQ(a.classes(), (std::vector<int64_t>{0, 2, 5}));
  ClassCensus b = ClassCensus::of({1, 5, 9});
  a.merge(b);
  EXPECT_EQ(a.classes(), (std::vector<int64_t>{0, 1, 2, 5, 9}));
  EXPECT_EQ(a.present(), 5);
  EXPECT_EQ(ClassCensus().max_label(), -1);
}

TEST(ClassCount, ImpliedCountsAcceptGapsButNotAStrayLabel) {
  EXPECT_EQ(resolve_num_classes(input_of({0, 1, 2, 1})), 3);
  // A few empty classes are fine (a subset of a dataset, a small generated graph).
  EXPECT_EQ(resolve_num_classes(input_of({0, 3, 9})), 10);
  // More empty than present, but under 16 empty: fine.
  EXPECT_EQ(resolve_num_classes(input_of({0, 1, 2, 3, 4, 20})), 21);
  // The case: one label 100000 among 5 classes.
  const std::string what = error_of(input_of({0, 1, 2, 3, 4, 100000}));
  EXPECT_EQ(what,
            "ds: the largest label, 100000, makes 100001 classes, but only 6 of them have a node "
            "(a stray label? every model would get 100001 outputs); correct the labels, or give "
            "`num_classes` 100001 if the dataset really has that many classes");
  // The edge of the rule: 16 empty and more empty than present.
  EXPECT_NE(error_of(input_of({0, 1, 2, 3, 4, 21})), "");
}

TEST(ClassCount, AGivenCountWinsAndBoundsTheLabels) {
  EXPECT_EQ(resolve_num_classes(input_of({0, 1, 2, 3, 4, 100000}, 0, 100001)), 100001);
  EXPECT_EQ(resolve_num_classes(input_of({0, 1}, 0, 7)), 7);
  EXPECT_EQ(error_of(input_of({0, 1, 2}, 0, 2)), "ds: label 2 is outside [0, 2) (`num_classes` 2)");
  try {
    resolve_num_classes(input_of({0}, 0, -1));
    ADD_FAILURE();
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.parameter(), "num_classes");
  }
}

TEST(ClassCount, AStatedCountIsTakenAndMustMatchAGivenOne) {
  // The chunked layout's manifest: its word, whatever the labels.
  EXPECT_EQ(resolve_num_classes(input_of({0, 40}, 100)), 100);
  EXPECT_EQ(resolve_num_classes(input_of({0, 40}, 100, 100)), 100);
  try {
    resolve_num_classes(input_of({0, 40}, 100, 50));
    ADD_FAILURE();
  } catch (const ParameterError& e) {
    EXPECT_EQ(e.parameter(), "num_classes");
    EXPECT_NE(std::string(e.what()).find("states 100 classes"), std::string::npos) << e.what();
  }
}

TEST(ClassCount, LoadDatasetRefusesAStrayLabelUnlessTheCountIsGiven) {
  TempDir dir;
  NumpyArrays a;
  a.labels = {0, 1, 2, 100000};
  write_numpy(dir.path(), a);
  expect_load_error<FormatError>(dir.path(), dir.path(),
                                 {"the largest label, 100000, makes 100001 classes"});
  LoadOptions given;
  given.num_classes = 100001;
  EXPECT_EQ(load_dataset(dir.path(), given).num_classes, 100001);
  given.num_classes = 3;
  expect_load_error<FormatError>(dir.path(), dir.path(), {"label 100000 is outside [0, 3)"}, given);
}

}  // namespace
}  // namespace partita::data::testing
