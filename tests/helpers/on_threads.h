#pragma once
// Ranks as threads, for in-process tests of collective code: on_threads(n, fn) runs fn(r) for
// r in [0, n) on n threads, joins them all, and returns each rank's failure (the what() of
// the exception fn(r) threw, "" where none), so a test can assert every rank's outcome.
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace partita::testing {

inline std::vector<std::string> on_threads(int ranks, const std::function<void(int)>& fn) {
  std::vector<std::string> failures(static_cast<size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (const std::exception& e) {
        failures[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return failures;
}

}  // namespace partita::testing
