#pragma once
// Request/response between ranks over a Transport: one RpcEndpoint per rank, each serving
// the requests of the others with a handler and issuing its own with call_all().
//
// Threads. The constructor starts one service thread that polls the transport for requests,
// replies and byes. It never sits in a blocking call and never spins: when idle it sleeps
// with a slowly growing backoff (options.min_idle_sleep .. max_idle_sleep; decision 9).
// The handler runs on that thread, one request at a time, including requests a rank sends to
// itself (they go through the transport like any other), so the handler need not be
// thread-safe with itself; it must not call call_all() on the same endpoint (that deadlocks
// until the deadline). A slow handler delays every reply this rank receives meanwhile.
//
// Blocking. call_all() blocks its caller (on a condition variable, not spinning) until every
// reply arrived or options.timeout_s passed. shutdown() blocks up to options.timeout_s.
// call_all() may be called from several threads at once; shutdown() from one thread.
//
// Clean exit. Every rank calls shutdown() once its own calls are done; it sends "bye" to
// every rank and keeps serving until it has a bye from every rank and its outgoing replies
// have completed, so no rank stops serving while another may still ask it something. The
// destructor does not do that: it stops the service thread at once (after a running handler
// returns), never throws, and never waits for peers; without shutdown() peers may time out.
// No call_all() may be in progress when the endpoint is destroyed.
//
// Large messages. A request or reply (payload + 8-byte id) over options.max_message_bytes
// (by default what one MPI message can carry, 2^31-1 bytes) is sent as consecutive parts of
// at most that size and reassembled by the receiving endpoint, so callers and handlers never
// see the limit. Parts cost one extra copy on each side; messages under the limit none.
//
// Send failures. A reply the service thread cannot send (too large for the transport, an
// MPI failure) does not stop the service: the caller gets, in its place, an error naming
// the serving rank, the request id and the size, rethrown by call_all() as CommError. If even
// that error cannot be sent, the caller's deadline names the rank. A request that cannot be
// sent throws from call_all()/start_all() on the calling thread.
//
// Wire format (private to this file's implementation): the payload followed by an 8-byte
// request id, so neither requests nor replies are copied to add a header. A part carries a
// slice of that message followed by [total bytes, tag, id] (8 bytes each).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "partita/comm/transport.h"

namespace partita {

struct RpcOptions {
  // Deadline of one call_all() and of shutdown(), in seconds (DESIGN decision 11).
  double timeout_s = 60.0;
  // Idle backoff of the service thread: the first sleep after work, growing by
  // idle_sleep_growth per empty poll up to the max. A rank idle for t adds about t/9 (at the
  // default growth) and at most max_idle_sleep to the latency of a request it receives.
  std::chrono::microseconds min_idle_sleep{20};
  std::chrono::microseconds max_idle_sleep{1000};
  double idle_sleep_growth = 1.125;
  // While a call of this rank waits for replies the service thread is not idle: its sleep
  // between polls stays at most this long (or 1/16 of the time waited so far, whichever is
  // longer), so a reply waits for it at most that long too.
  std::chrono::microseconds max_reply_wait_sleep{50};
  // Largest message handed to the transport (see "Large messages"); at least 64. Tests
  // lower it to exercise parts.
  size_t max_message_bytes = 2147483647;
};

// Serves one request from rank `source`; returns the reply bytes. `data` is valid during the
// call only and starts a heap buffer (malloc-aligned), as do the replies call_all() returns.
// An exception it throws is sent back and rethrown by the caller's call_all() as CommError
// with its message.
using RpcHandler =
    std::function<std::vector<uint8_t>(int source, const uint8_t* data, size_t size)>;

struct RpcRequest {
  int dest = -1;
  std::vector<uint8_t> data;
};

struct RpcStats {
  int64_t requests_sent = 0;
  int64_t requests_served = 0;
  int64_t bytes_sent = 0;      // request and reply payloads sent by this rank
  int64_t bytes_received = 0;  // request and reply payloads received by this rank
};

class RpcEndpoint {
 public:
  // `transport` must outlive the endpoint and carry no other traffic. Starts serving at once.
  RpcEndpoint(Transport& transport, RpcHandler handler, RpcOptions options = {});
  ~RpcEndpoint();
  RpcEndpoint(const RpcEndpoint&) = delete;
  RpcEndpoint& operator=(const RpcEndpoint&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Sends every request (at most one per destination rank; ownership of the bytes passes),
  // waits for all replies and returns them in request order. Throws TimeoutError naming the
  // ranks that did not answer within options.timeout_s, CommError if a remote handler threw
  // (naming the rank, with its message), on a bad or repeated destination, after shutdown()
  // or if the service thread failed. Thread-safe.
  std::vector<std::vector<uint8_t>> call_all(std::vector<RpcRequest> requests);
  // call_all() with one request.
  std::vector<uint8_t> call(int dest, std::vector<uint8_t> data);

  // call_all() in two halves, so that the caller works while its requests are served:
  // start_all() checks and sends (throwing as call_all does) and returns at once;
  // finish_all() waits as call_all does, from the start_all() deadline, and returns the
  // replies in request order. A Pending destroyed unfinished (e.g. while an exception
  // unwinds) withdraws its call: late replies are dropped. A Pending must not outlive its
  // endpoint, and counts as a call in progress for shutdown() until finished or destroyed.
  class Pending;
  Pending start_all(std::vector<RpcRequest> requests);
  std::vector<std::vector<uint8_t>> finish_all(Pending pending);

  // Liveness probe: pings every other rank's service thread (answered by the service itself,
  // not the handler) and returns, ascending, the ranks that did not answer within
  // timeout_s: stopped, dead, or cut off. A rank busy outside its service thread still
  // answers. Throws CommError as call_all does. Thread-safe.
  std::vector<int> unresponsive_ranks(double timeout_s);

  // Waits for this rank's calls in progress, then says bye to every rank and waits until every
  // rank said bye and this rank's replies are delivered; then the service thread has stopped.
  // Throws TimeoutError naming the ranks that did not say bye within options.timeout_s (the
  // service is stopped anyway). A second call after success returns at once. The deadline
  // counts from this call, so ranks should reach shutdown() within timeout_s of each other
  // (e.g. after the same number of steps, or after a barrier).
  void shutdown();

  RpcStats stats() const;

 private:
  struct Call;
  struct Started;
  friend class Pending;
  struct Route {
    Call* call;
    size_t index;
  };

  // Sends requests with `tag` and waits for the replies until timeout_s; the ranks that
  // did not answer go to *silent (their replies stay empty). Throws CommError as call_all.
  std::vector<std::vector<uint8_t>> exchange(std::vector<RpcRequest> requests, int tag,
                                             double timeout_s, std::vector<int>* silent);
  // The halves of exchange(): begin registers and sends, end waits and collects.
  std::unique_ptr<Started> begin_exchange(std::vector<RpcRequest> requests, int tag,
                                          double timeout_s);
  std::vector<std::vector<uint8_t>> end_exchange(Started& started, std::vector<int>* silent);
  void withdraw(Started& started);  // unregisters an unfinished call
  void serve();
  void dispatch(Message message);
  void deliver_reply(int source, uint64_t id, std::vector<uint8_t> data, bool is_error);
  // Sends `data` (payload + id trailer) as one message or as parts (see "Large messages").
  void send_message(int dest, int tag, std::vector<uint8_t> data);
  // Adds a part to its message; the whole message once its last part arrived.
  std::optional<Message> take_part(Message part);
  // Service thread only: messages being reassembled, by (source, tag, id). The parts of a
  // message whose sender stopped part-way stay until the endpoint is destroyed.
  struct Assembly {
    std::vector<uint8_t> data;
    size_t filled = 0;
  };
  std::map<std::tuple<int, int, uint64_t>, Assembly> assemblies_;
  void fail_all_calls_locked();
  void wake_service();
  void stop_service();

  Transport& transport_;
  RpcHandler handler_;
  RpcOptions options_;
  int rank_;
  int size_;

  mutable std::mutex mutex_;                    // guards everything below up to service_
  std::unordered_map<uint64_t, Route> routes_;  // request id -> waiting call
  uint64_t next_id_ = 1;
  int active_calls_ = 0;
  bool closing_ = false;    // shutdown() started: no new calls
  bool shut_down_ = false;  // shutdown() completed
  bool bye_sent_ = false;   // the service may stop once every rank said bye
  std::vector<char> bye_from_;
  int byes_ = 0;
  size_t sends_in_flight_ = 0;
  bool stop_ = false;  // stop serving now (destructor, or shutdown past its deadline)
  bool wake_ = false;
  bool service_exited_ = false;
  std::string service_error_;           // set when the service thread failed
  std::condition_variable wake_cv_;     // the idle service thread waits here
  std::condition_variable calls_cv_;    // active_calls_ dropped to 0
  std::condition_variable service_cv_;  // service_exited_ became true
  std::thread service_;

  std::atomic<int64_t> requests_sent_{0};
  std::atomic<int64_t> requests_served_{0};
  std::atomic<int64_t> bytes_sent_{0};
  std::atomic<int64_t> bytes_received_{0};
};

// A call started by RpcEndpoint::start_all(); move-only. See start_all().
class RpcEndpoint::Pending {
 public:
  Pending(Pending&& other) noexcept;
  Pending& operator=(Pending&&) = delete;
  Pending(const Pending&) = delete;
  ~Pending();

 private:
  friend class RpcEndpoint;
  Pending(RpcEndpoint* endpoint, std::unique_ptr<Started> started);
  RpcEndpoint* endpoint_ = nullptr;
  std::unique_ptr<Started> started_;  // null: nothing was sent (no requests) or moved from
};

}  // namespace partita
