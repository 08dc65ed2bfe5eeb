// Compiled against a fake torch prefix whose include dir also holds an fmt that #errors
// (tests/build/torch_probe_test.sh): it builds only if torch's headers are reached and
// torch's bundled fmt is not.
#include <ATen/core/Tensor.h>
#include <ATen/ops/ones.h>
#include <fmt/core.h>
#include <probe_top_level.h>        // a file (not a folder) at the top of torch's include dir
#include <torch/expanding_array.h>  // from torch's second include dir, csrc/api/include

static_assert(FMT_VERSION / 10000 == PROBE_FMT_MAJOR,
              "the fmt headers are not those of the fmt library we link");
static_assert(PROBE_TOP_LEVEL == 1, "the wrong probe_top_level.h");

int main() {
  const torch::ExpandingArray<1> size(3);
  const float sum = at::ones(*size).mul(2).sum().item<float>();
  fmt::print("torch_probe: sum={} fmt={}\n", sum, FMT_VERSION);
  return sum == 6.0f ? 0 : 1;
}
