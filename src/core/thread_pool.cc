#include "partita/core/thread_pool.h"

#include <utility>

namespace partita {

ThreadPool::ThreadPool(int workers) { reserve(workers); }

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  // Workers drain the queue before they exit; the vector no longer changes (no reserve()
  // may run concurrently with destruction).
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::reserve(int workers) {
  std::lock_guard<std::mutex> lock(mutex_);
  while (static_cast<int>(workers_.size()) < workers) workers_.emplace_back([this] { work(); });
}

int ThreadPool::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(workers_.size());
}

void ThreadPool::enqueue(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!workers_.empty()) {
      queue_.push_back(std::move(task));
      task = nullptr;
    }
  }
  if (task) {
    task();
    return;
  }
  cv_.notify_one();
}

void ThreadPool::work() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping_, and nothing left to run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace partita
