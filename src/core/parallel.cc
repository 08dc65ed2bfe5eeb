#include "partita/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace partita {

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

void parallel_chunks(int64_t begin, int64_t end, int64_t chunk, int threads,
                     const std::function<void(int64_t, int64_t)>& fn) {
  if (end <= begin) return;
  chunk = std::max<int64_t>(chunk, 1);
  const int64_t num_chunks = (end - begin + chunk - 1) / chunk;
  threads = static_cast<int>(std::min<int64_t>(std::max(threads, 1), num_chunks));
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    while (true) {
      int64_t c = next.fetch_add(1);
      if (c >= num_chunks) return;
      {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (error) return;
      }
      int64_t b = begin + c * chunk;
      try {
        fn(b, std::min(end, b + chunk));
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace partita
