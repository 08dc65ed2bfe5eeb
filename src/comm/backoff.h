#pragma once
// Idle backoff for polling loops (DESIGN decision 9). A poller that found nothing sleeps
// next(), which grows by `growth` per call from `min` up to `max`; reset() after useful work.
//
// Growth is gentle (1.125 by default) rather than doubling: after idling for t, the next
// sleep is about t/9, so a message arriving then waits at most ~11% extra. With doubling the
// sleep is about t, and request/reply ping-pong feeds on itself until every hop waits the
// full `max` (measured: 2.8 ms round trips at max 1 ms, against ~0.1-0.3 ms now).
#include <algorithm>
#include <chrono>

namespace partita {

class Backoff {
 public:
  using Duration = std::chrono::microseconds;

  Backoff(Duration min, Duration max, double growth = 1.125)
      : min_(static_cast<double>(std::max<Duration::rep>(1, min.count()))),
        max_(std::max(min_, static_cast<double>(max.count()))),
        growth_(std::max(1.0, growth)),
        current_(min_) {}

  void reset() { current_ = min_; }
  Duration next() {
    const double wait = current_;
    current_ = std::min(max_, current_ * growth_);
    return Duration(static_cast<Duration::rep>(wait));
  }

 private:
  double min_;
  double max_;
  double growth_;
  double current_;
};

}  // namespace partita
