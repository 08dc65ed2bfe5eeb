#pragma once
// Shared by the fuzz targets. A target catches partita::Error (the expected rejection of
// bad input); anything else is a finding: a crash, a sanitizer report, another exception
// escaping LLVMFuzzerTestOneInput (std::terminate), a hang, an allocation over the limit,
// or a violated property, which fuzz_require turns into an abort that libFuzzer reports
// together with the input.
#include <cstdio>
#include <cstdlib>
#include <string>

namespace partita::fuzz {

inline void fuzz_require(bool ok, const char* property, const std::string& detail = "") {
  if (ok) return;
  std::fprintf(stderr, "fuzz property violated: %s\n%s\n", property, detail.c_str());
  std::abort();
}

}  // namespace partita::fuzz
