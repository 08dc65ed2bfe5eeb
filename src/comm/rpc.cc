#include "partita/comm/rpc.h"

#include <cstring>

#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "backoff.h"
#include "partita/comm/errors.h"
#include "partita/core/log.h"

namespace partita {
namespace {

// kTagPing: a request the service thread answers itself with an empty reply (liveness).
// kTagPart: a slice of a message over max_message_bytes (rpc.h, "Large messages").
enum Tag : int {
  kTagRequest = 1,
  kTagReply = 2,
  kTagError = 3,
  kTagBye = 4,
  kTagPing = 5,
  kTagPart = 6
};
constexpr size_t kIdBytes = sizeof(uint64_t);
constexpr size_t kPartTrailerBytes = 3 * sizeof(uint64_t);  // total bytes, tag, id
constexpr size_t kMinMessageBytes = 64;
// A part announcing a larger message is malformed (no allocation of absurd sizes).
constexpr uint64_t kMaxAssembledBytes = uint64_t{1} << 40;
constexpr int kMaxMessagesPerPoll = 64;  // then test sends and the stop conditions again

using Clock = std::chrono::steady_clock;

Clock::time_point deadline_after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

void append_id(std::vector<uint8_t>& data, uint64_t id) {
  const size_t size = data.size();
  data.resize(size + kIdBytes);
  std::memcpy(data.data() + size, &id, kIdBytes);
}

uint64_t read_u64(const uint8_t* at) {
  uint64_t value = 0;
  std::memcpy(&value, at, sizeof(value));
  return value;
}

// Removes the id trailer; false if the message is too short to carry one.
bool take_id(std::vector<uint8_t>& data, uint64_t* id) {
  if (data.size() < kIdBytes) return false;
  std::memcpy(id, data.data() + data.size() - kIdBytes, kIdBytes);
  data.resize(data.size() - kIdBytes);
  return true;
}

std::string rank_list(const std::vector<int>& ranks) {
  return fmt::format("rank{} {}", ranks.size() == 1 ? "" : "s", fmt::join(ranks, ", "));
}

}  // namespace

struct RpcEndpoint::Call {
  explicit Call(size_t n) : replies(n), errors(n), answered(n, 0), remaining(n) {}
  std::condition_variable done_cv;
  std::vector<std::vector<uint8_t>> replies;
  std::vector<std::string> errors;  // non-empty: the remote handler threw this
  std::vector<char> answered;
  size_t remaining;
};

RpcEndpoint::RpcEndpoint(Transport& transport, RpcHandler handler, RpcOptions options)
    : transport_(transport),
      handler_(std::move(handler)),
      options_(options),
      rank_(transport.rank()),
      size_(transport.size()),
      bye_from_(static_cast<size_t>(transport.size()), 0) {
  PARTITA_CHECK(handler_ != nullptr, CommError, "RpcEndpoint on rank {}: no handler", rank_);
  PARTITA_CHECK(options_.timeout_s > 0, CommError,
                "RpcEndpoint on rank {}: timeout {} s must be positive", rank_, options_.timeout_s);
  PARTITA_CHECK(options_.max_message_bytes >= kMinMessageBytes, CommError,
                "RpcEndpoint on rank {}: max_message_bytes {} is below {}", rank_,
                options_.max_message_bytes, kMinMessageBytes);
  service_ = std::thread([this] { serve(); });
}

RpcEndpoint::~RpcEndpoint() { stop_service(); }

void RpcEndpoint::stop_service() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_cv_.notify_all();
  if (service_.joinable()) service_.join();
}

void RpcEndpoint::wake_service() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_ = true;
  }
  wake_cv_.notify_one();
}

void RpcEndpoint::serve() {
#ifdef __linux__
  // Linux delays a sleeping thread's wake-up by up to its timer slack (50 us by default),
  // which would dominate the short sleeps of a recently busy service thread.
  prctl(PR_SET_TIMERSLACK, 1000UL /*ns*/, 0, 0, 0);
#endif
  Backoff backoff(options_.min_idle_sleep, options_.max_idle_sleep, options_.idle_sleep_growth);
  Clock::time_point last_work = Clock::now();  // last message handled or call started
  try {
    while (true) {
      bool busy = false;
      for (int i = 0; i < kMaxMessagesPerPoll; ++i) {
        std::optional<Message> message = transport_.poll();
        if (!message) break;
        busy = true;
        dispatch(std::move(*message));
      }
      const size_t in_flight = transport_.progress();

      std::unique_lock<std::mutex> lock(mutex_);
      sends_in_flight_ = in_flight;
      if (stop_) break;
      if (bye_sent_ && byes_ == size_ && in_flight == 0) break;
      if (busy || wake_) {
        wake_ = false;
        backoff.reset();
        last_work = Clock::now();
        if (busy) continue;
      }
      auto sleep = backoff.next();
      if (!routes_.empty()) {
        // A reply is awaited: sleep at most max_reply_wait_sleep, or 1/16 of the time waited
        // so far (a long wait costs the CPU of an idle rank, not of a poller).
        const auto waited = std::chrono::duration_cast<Backoff::Duration>(Clock::now() - last_work);
        sleep = std::min(sleep, std::max(options_.max_reply_wait_sleep, waited / 16));
      }
      wake_cv_.wait_for(lock, sleep, [this] { return stop_ || wake_; });
    }
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    service_error_ = e.what();
    fail_all_calls_locked();
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    service_error_ = "unknown exception";
    fail_all_calls_locked();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  service_exited_ = true;
  service_cv_.notify_all();
}

void RpcEndpoint::fail_all_calls_locked() {
  for (auto& [id, route] : routes_) route.call->done_cv.notify_all();
}

void RpcEndpoint::dispatch(Message message) {
  const int source = message.source;
  if (message.tag == kTagPart) {
    std::optional<Message> whole = take_part(std::move(message));
    if (whole) dispatch(std::move(*whole));
    return;
  }
  if (message.tag == kTagBye) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!bye_from_[static_cast<size_t>(source)]) {
      bye_from_[static_cast<size_t>(source)] = 1;
      ++byes_;
    }
    return;
  }
  uint64_t id = 0;
  if (!take_id(message.data, &id)) {
    log_warning("rpc on rank {}: dropped a {}-byte message (tag {}) from rank {}: too short", rank_,
                message.data.size(), message.tag, source);
    return;
  }
  bytes_received_ += static_cast<int64_t>(message.data.size());
  switch (message.tag) {
    case kTagRequest: {
      std::vector<uint8_t> reply;
      int tag = kTagReply;
      try {
        reply = handler_(source, message.data.data(), message.data.size());
      } catch (const std::exception& e) {
        const std::string text = e.what();
        reply.assign(text.begin(), text.end());
        tag = kTagError;
      } catch (...) {
        const std::string text = "unknown exception";
        reply.assign(text.begin(), text.end());
        tag = kTagError;
      }
      ++requests_served_;
      const size_t reply_bytes = reply.size();
      bytes_sent_ += static_cast<int64_t>(reply_bytes);
      append_id(reply, id);
      try {
        send_message(source, tag, std::move(reply));
      } catch (const std::exception& e) {
        // The caller must learn why its reply never comes; the service goes on.
        const std::string text =
            fmt::format("rank {} could not send its {}-byte {} to request {} of rank {}: {}", rank_,
                        reply_bytes, tag == kTagError ? "error" : "reply", id, source, e.what());
        std::vector<uint8_t> error(text.begin(), text.end());
        append_id(error, id);
        try {
          send_message(source, kTagError, std::move(error));
        } catch (const std::exception& e2) {
          log_warning("rpc on rank {}: {}; and the error could not be sent either: {}", rank_, text,
                      e2.what());
        }
      }
      return;
    }
    case kTagPing: {
      std::vector<uint8_t> reply;
      append_id(reply, id);
      try {
        transport_.send(source, kTagReply, std::move(reply));
      } catch (const std::exception& e) {
        log_warning("rpc on rank {}: could not answer a ping of rank {}: {}", rank_, source,
                    e.what());
      }
      return;
    }
    case kTagError:
      // A reply that failed part-way leaves its first parts behind: drop them.
      assemblies_.erase(std::make_tuple(source, static_cast<int>(kTagReply), id));
      [[fallthrough]];
    case kTagReply:
      deliver_reply(source, id, std::move(message.data), message.tag == kTagError);
      return;
    default:
      log_warning("rpc on rank {}: dropped a message with unknown tag {} from rank {}", rank_,
                  message.tag, source);
  }
}

void RpcEndpoint::deliver_reply(int source, uint64_t id, std::vector<uint8_t> data, bool is_error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = routes_.find(id);
  if (it == routes_.end()) {
    // The call gave up (deadline) before this reply came.
    log_debug("rpc on rank {}: late reply {} from rank {} dropped", rank_, id, source);
    return;
  }
  Call& call = *it->second.call;
  const size_t index = it->second.index;
  routes_.erase(it);
  if (is_error) {
    call.errors[index].assign(data.begin(), data.end());
  } else {
    call.replies[index] = std::move(data);
  }
  call.answered[index] = 1;
  if (--call.remaining == 0) call.done_cv.notify_one();
}

void RpcEndpoint::send_message(int dest, int tag, std::vector<uint8_t> data) {
  const size_t limit = options_.max_message_bytes;
  if (data.size() <= limit) {
    transport_.send(dest, tag, std::move(data));
    return;
  }
  // Parts of one message may interleave with other messages to `dest` (other threads send
  // too), but arrive in order among themselves (FIFO per pair): (tag, id) tells them apart.
  const uint64_t total = data.size();
  const uint64_t id = read_u64(data.data() + data.size() - kIdBytes);
  const size_t slice = limit - kPartTrailerBytes;
  auto add_trailer = [&](std::vector<uint8_t>& part) {
    append_id(part, total);
    append_id(part, static_cast<uint64_t>(tag));
    append_id(part, id);
  };
  // Every part but the first is a copy; the first is `data` itself, truncated in place (its
  // capacity holds the trailer), so a message just over the limit copies only its tail.
  std::vector<std::vector<uint8_t>> rest;
  for (size_t at = slice; at < total; at += slice) {
    const size_t n = std::min<size_t>(slice, total - at);
    std::vector<uint8_t> part;
    part.reserve(n + kPartTrailerBytes);
    part.insert(part.end(), data.begin() + static_cast<ptrdiff_t>(at),
                data.begin() + static_cast<ptrdiff_t>(at + n));
    add_trailer(part);
    rest.push_back(std::move(part));
  }
  data.resize(slice);
  add_trailer(data);
  transport_.send(dest, kTagPart, std::move(data));
  for (std::vector<uint8_t>& part : rest) transport_.send(dest, kTagPart, std::move(part));
}

std::optional<Message> RpcEndpoint::take_part(Message part) {
  if (part.data.size() < kPartTrailerBytes) {
    log_warning("rpc on rank {}: dropped a {}-byte part from rank {}: too short", rank_,
                part.data.size(), part.source);
    return std::nullopt;
  }
  const uint8_t* trailer = part.data.data() + part.data.size() - kPartTrailerBytes;
  const uint64_t total = read_u64(trailer);
  const uint64_t tag = read_u64(trailer + 8);
  const uint64_t id = read_u64(trailer + 16);
  const size_t n = part.data.size() - kPartTrailerBytes;
  const auto key = std::make_tuple(part.source, static_cast<int>(tag), id);
  auto it = assemblies_.find(key);
  if (it == assemblies_.end()) {
    if (total < kIdBytes || total > kMaxAssembledBytes || tag == kTagPart) {
      log_warning("rpc on rank {}: dropped a part from rank {} announcing {} bytes with tag {}",
                  rank_, part.source, total, tag);
      return std::nullopt;
    }
    it = assemblies_.emplace(key, Assembly{}).first;
    it->second.data.resize(total);
  }
  Assembly& assembly = it->second;
  if (assembly.data.size() != total || assembly.filled + n > total) {
    log_warning("rpc on rank {}: dropped message {} (tag {}) from rank {}: parts do not add up",
                rank_, id, tag, part.source);
    assemblies_.erase(it);
    return std::nullopt;
  }
  std::memcpy(assembly.data.data() + assembly.filled, part.data.data(), n);
  assembly.filled += n;
  if (assembly.filled < total) return std::nullopt;
  Message whole{part.source, static_cast<int>(tag), std::move(assembly.data)};
  assemblies_.erase(it);
  return whole;
}

std::vector<std::vector<uint8_t>> RpcEndpoint::call_all(std::vector<RpcRequest> requests) {
  std::vector<int> silent;
  std::vector<std::vector<uint8_t>> replies =
      exchange(std::move(requests), kTagRequest, options_.timeout_s, &silent);
  if (!silent.empty()) {
    throw TimeoutError(fmt::format("{} did not answer within {:g} s (call_all from rank {})",
                                   rank_list(silent), options_.timeout_s, rank_));
  }
  return replies;
}

std::vector<int> RpcEndpoint::unresponsive_ranks(double timeout_s) {
  std::vector<RpcRequest> pings;
  for (int r = 0; r < size_; ++r)
    if (r != rank_) pings.push_back(RpcRequest{r, {}});
  std::vector<int> silent;
  exchange(std::move(pings), kTagPing, timeout_s, &silent);
  return silent;
}

// One exchange in progress: the Call its routes point at (address stable on the heap), the
// request ids and destinations, and the deadline.
struct RpcEndpoint::Started {
  explicit Started(size_t n) : call(n), ids(n), dests(n) {}
  Call call;
  std::vector<uint64_t> ids;
  std::vector<int> dests;
  Clock::time_point deadline;
  bool registered = false;  // counted in active_calls_, routes_ hold its ids
};

std::vector<std::vector<uint8_t>> RpcEndpoint::exchange(std::vector<RpcRequest> requests, int tag,
                                                        double timeout_s,
                                                        std::vector<int>* silent) {
  if (requests.empty()) return {};
  std::unique_ptr<Started> started = begin_exchange(std::move(requests), tag, timeout_s);
  return end_exchange(*started, silent);
}

std::unique_ptr<RpcEndpoint::Started> RpcEndpoint::begin_exchange(std::vector<RpcRequest> requests,
                                                                  int tag, double timeout_s) {
  const size_t n = requests.size();
  std::vector<char> seen(static_cast<size_t>(size_), 0);
  for (const RpcRequest& request : requests) {
    PARTITA_CHECK(request.dest >= 0 && request.dest < size_, CommError,
                  "call_all on rank {}: destination rank {} is not in [0, {})", rank_, request.dest,
                  size_);
    PARTITA_CHECK(!seen[static_cast<size_t>(request.dest)], CommError,
                  "call_all on rank {}: two requests for rank {} (at most one per rank)", rank_,
                  request.dest);
    seen[static_cast<size_t>(request.dest)] = 1;
  }

  auto started = std::make_unique<Started>(n);
  for (size_t i = 0; i < n; ++i) started->dests[i] = requests[i].dest;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    PARTITA_CHECK(service_error_.empty(), CommError, "rpc service of rank {} failed: {}", rank_,
                  service_error_);
    PARTITA_CHECK(!closing_ && !stop_, CommError, "call_all on rank {} after shutdown()", rank_);
    ++active_calls_;
    started->registered = true;
    for (size_t i = 0; i < n; ++i) {
      started->ids[i] = next_id_++;
      routes_.emplace(started->ids[i], Route{&started->call, i});
    }
  }

  started->deadline = deadline_after(timeout_s);
  try {
    for (size_t i = 0; i < n; ++i) {
      const size_t bytes = requests[i].data.size();
      bytes_sent_ += static_cast<int64_t>(bytes);
      append_id(requests[i].data, started->ids[i]);
      try {
        send_message(requests[i].dest, tag, std::move(requests[i].data));
      } catch (const std::exception& e) {
        throw CommError(
            fmt::format("call_all on rank {}: could not send request {} ({} bytes) "
                        "to rank {}: {}",
                        rank_, started->ids[i], bytes, requests[i].dest, e.what()));
      }
      ++requests_sent_;
    }
  } catch (...) {
    withdraw(*started);
    throw;
  }
  wake_service();  // replies are coming: poll eagerly
  return started;
}

void RpcEndpoint::withdraw(Started& started) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!started.registered) return;
  started.registered = false;
  for (uint64_t id : started.ids) routes_.erase(id);
  if (--active_calls_ == 0) calls_cv_.notify_all();
}

std::vector<std::vector<uint8_t>> RpcEndpoint::end_exchange(Started& started,
                                                            std::vector<int>* silent) {
  Call& call = started.call;
  const size_t n = started.ids.size();
  std::unique_lock<std::mutex> lock(mutex_);
  call.done_cv.wait_until(lock, started.deadline, [&] {
    return call.remaining == 0 || !service_error_.empty() || service_exited_;
  });
  const std::string service_error = service_error_;
  const bool service_gone = service_exited_;
  lock.unlock();
  withdraw(started);

  std::vector<std::string> failures;
  for (size_t i = 0; i < n; ++i) {
    if (!call.errors[i].empty()) {
      failures.push_back(fmt::format("rank {} failed to serve a request from rank {}: {}",
                                     started.dests[i], rank_, call.errors[i]));
    } else if (!call.answered[i]) {
      silent->push_back(started.dests[i]);
    }
  }
  if (!failures.empty()) throw CommError(fmt::format("{}", fmt::join(failures, "; ")));
  if (!silent->empty()) {
    PARTITA_CHECK(service_error.empty(), CommError, "rpc service of rank {} failed: {}", rank_,
                  service_error);
    PARTITA_CHECK(!service_gone, CommError,
                  "call_all on rank {}: the service thread stopped before {} answered", rank_,
                  rank_list(*silent));
  }
  return std::move(call.replies);
}

RpcEndpoint::Pending::Pending(RpcEndpoint* endpoint, std::unique_ptr<Started> started)
    : endpoint_(endpoint), started_(std::move(started)) {}

RpcEndpoint::Pending::Pending(Pending&& other) noexcept
    : endpoint_(other.endpoint_), started_(std::move(other.started_)) {}

RpcEndpoint::Pending::~Pending() {
  if (started_ != nullptr) endpoint_->withdraw(*started_);
}

RpcEndpoint::Pending RpcEndpoint::start_all(std::vector<RpcRequest> requests) {
  if (requests.empty()) return Pending(this, nullptr);
  return Pending(this, begin_exchange(std::move(requests), kTagRequest, options_.timeout_s));
}

std::vector<std::vector<uint8_t>> RpcEndpoint::finish_all(Pending pending) {
  if (pending.started_ == nullptr) return {};
  std::vector<int> silent;
  std::vector<std::vector<uint8_t>> replies = end_exchange(*pending.started_, &silent);
  if (!silent.empty()) {
    throw TimeoutError(fmt::format("{} did not answer within {:g} s (call_all from rank {})",
                                   rank_list(silent), options_.timeout_s, rank_));
  }
  return replies;
}

std::vector<uint8_t> RpcEndpoint::call(int dest, std::vector<uint8_t> data) {
  std::vector<RpcRequest> requests;
  requests.push_back(RpcRequest{dest, std::move(data)});
  return std::move(call_all(std::move(requests))[0]);
}

void RpcEndpoint::shutdown() {
  const auto deadline = deadline_after(options_.timeout_s);
  std::unique_lock<std::mutex> lock(mutex_);
  if (shut_down_) return;
  PARTITA_CHECK(!closing_, CommError, "shutdown() on rank {} called twice", rank_);
  closing_ = true;
  if (!calls_cv_.wait_until(lock, deadline, [this] { return active_calls_ == 0; })) {
    throw TimeoutError(
        fmt::format("shutdown of rank {}: {} calls of this rank still waiting after {:g} s", rank_,
                    active_calls_, options_.timeout_s));
  }
  PARTITA_CHECK(service_error_.empty(), CommError, "rpc service of rank {} failed: {}", rank_,
                service_error_);
  lock.unlock();
  for (int r = 0; r < size_; ++r) transport_.send(r, kTagBye, {});
  lock.lock();
  bye_sent_ = true;
  wake_cv_.notify_one();
  const bool done = service_cv_.wait_until(lock, deadline, [this] { return service_exited_; });
  std::vector<int> silent;
  for (int r = 0; r < size_; ++r) {
    if (!bye_from_[static_cast<size_t>(r)]) silent.push_back(r);
  }
  const size_t in_flight = sends_in_flight_;
  const std::string service_error = service_error_;
  lock.unlock();
  stop_service();

  PARTITA_CHECK(service_error.empty(), CommError, "rpc service of rank {} failed: {}", rank_,
                service_error);
  if (!done) {
    PARTITA_CHECK(!silent.empty(), TimeoutError,
                  "shutdown of rank {}: {} replies not delivered within {:g} s", rank_, in_flight,
                  options_.timeout_s);
    throw TimeoutError(fmt::format("shutdown of rank {}: {} did not shut down within {:g} s", rank_,
                                   rank_list(silent), options_.timeout_s));
  }
  lock.lock();
  shut_down_ = true;
}

RpcStats RpcEndpoint::stats() const {
  RpcStats s;
  s.requests_sent = requests_sent_.load();
  s.requests_served = requests_served_.load();
  s.bytes_sent = bytes_sent_.load();
  s.bytes_received = bytes_received_.load();
  return s;
}

}  // namespace partita
