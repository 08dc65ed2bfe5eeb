#include "partita/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "partita/core/thread_pool.h"

namespace partita {
namespace {

// The helpers of every parallel_chunks call in the process. Function-local static: built on
// first use, joined at exit (idle by then).
ThreadPool& chunk_pool() {
  static ThreadPool pool;
  return pool;
}

// One parallel_chunks call. Shared with the helper tasks, which may start after the call
// returned: they then claim no chunk and never touch `fn`.
struct Job {
  Job(int64_t begin, int64_t end, int64_t chunk, int64_t num_chunks,
      const std::function<void(int64_t, int64_t)>& fn)
      : begin(begin), end(end), chunk(chunk), num_chunks(num_chunks), fn(fn) {}

  // Claims and runs chunks until none is left. `fn` is alive while any chunk is unfinished:
  // the caller waits for all of them.
  void run() {
    while (true) {
      const int64_t c = next.fetch_add(1);
      if (c >= num_chunks) return;
      if (!failed.load()) {
        const int64_t b = begin + c * chunk;
        try {
          fn(b, std::min(end, b + chunk));
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!error) error = std::current_exception();
          failed = true;
        }
      }
      if (finished.fetch_add(1) + 1 == num_chunks) {
        std::lock_guard<std::mutex> lock(mutex);
        all_done.notify_all();
      }
    }
  }

  const int64_t begin, end, chunk, num_chunks;
  const std::function<void(int64_t, int64_t)>& fn;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> finished{0};  // chunks run or skipped after an error
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::condition_variable all_done;
  std::exception_ptr error;  // guarded by mutex
};

}  // namespace

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

int parallel_chunks_workers() { return chunk_pool().size(); }

void parallel_chunks(int64_t begin, int64_t end, int64_t chunk, int threads,
                     const std::function<void(int64_t, int64_t)>& fn) {
  if (end <= begin) return;
  chunk = std::max<int64_t>(chunk, 1);
  const int64_t num_chunks = (end - begin + chunk - 1) / chunk;
  threads = static_cast<int>(std::min<int64_t>(std::max(threads, 1), num_chunks));
  auto job = std::make_shared<Job>(begin, end, chunk, num_chunks, fn);
  if (threads > 1) {
    ThreadPool& pool = chunk_pool();
    pool.reserve(threads - 1);
    // Futures dropped: the Job reports completion and errors itself.
    for (int t = 1; t < threads; ++t) pool.submit([job] { job->run(); });
  }
  job->run();  // the caller works too, so a busy pool (or a nested call) never stalls it
  {
    std::unique_lock<std::mutex> lock(job->mutex);
    job->all_done.wait(lock, [&] { return job->finished.load() == num_chunks; });
  }
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace partita
