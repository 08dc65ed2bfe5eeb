// The loader's option checks name the parameter at fault in the library's words
// (core/parameter_error.h): the command line shows them as flags, Python as keywords.
#include <gtest/gtest.h>

#include <string>

#include "partita/core/parameter_error.h"
#include "partita/loader/batch_pipeline.h"
#include "partita/loader/hot_nodes.h"
#include "partita/loader/seeds.h"

namespace partita::loader {
namespace {

template <class F>
std::string parameter_error_of(F&& f) {
  try {
    f();
  } catch (const ParameterError& e) {
    return e.what();
  }
  return "(no ParameterError)";
}

BatchPipelineOptions pipeline_options(int threads, int prefetch) {
  BatchPipelineOptions o;
  o.threads = threads;
  o.prefetch = prefetch;
  return o;
}

TEST(LoaderParameters, PipelineThreadsAndPrefetch) {
  EXPECT_NO_THROW(check_pipeline_options(pipeline_options(1, 1)));
  EXPECT_NO_THROW(check_pipeline_options(pipeline_options(kMaxPipelineThreads, kMaxPrefetch)));
  EXPECT_EQ(parameter_error_of([] { check_pipeline_options(pipeline_options(0, 2)); }),
            "threads: must be in [1, 256], got 0");
  EXPECT_EQ(parameter_error_of([] { check_pipeline_options(pipeline_options(257, 2)); }),
            "threads: must be in [1, 256], got 257");
  EXPECT_EQ(parameter_error_of([] { check_pipeline_options(pipeline_options(1, 0)); }),
            "prefetch: must be in [1, 1024], got 0");
  EXPECT_EQ(parameter_error_of([] { check_pipeline_options(pipeline_options(1, 1025)); }),
            "prefetch: must be in [1, 1024], got 1025");
}

TEST(LoaderParameters, CacheRatioAndPresampleBatches) {
  EXPECT_NO_THROW(check_cache_options(0, 1));
  EXPECT_NO_THROW(check_cache_options(1, 1));
  EXPECT_EQ(parameter_error_of([] { check_cache_options(-0.5, 1); }),
            "cache_ratio: must be in [0, 1] (a share of the nodes a rank owns), got -0.5");
  EXPECT_EQ(parameter_error_of([] { check_cache_options(1.5, 1); }),
            "cache_ratio: must be in [0, 1] (a share of the nodes a rank owns), got 1.5");
  EXPECT_EQ(parameter_error_of([] { check_cache_options(0.5, 0); }),
            "cache_presample_batches: must be >= 1, got 0");
}

TEST(LoaderParameters, BatchSize) {
  EXPECT_EQ(parameter_error_of([] { steps_per_epoch(9, 0); }), "batch_size: must be >= 1, got 0");
  EXPECT_EQ(parameter_error_of([] {
              GlobalBatches({{1, 1}, {2, 2}}, -3);
            }),
            "batch_size: must be >= 1, got -3");
}

}  // namespace
}  // namespace partita::loader
