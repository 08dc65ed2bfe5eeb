#pragma once
// Learned node embeddings for node types without features, distributed like DGL's
// DistEmbedding (issue 11, item 4): a table of `dim` float32 columns over a set of global
// ids, each rank owning the rows of one contiguous id range (possibly empty), looked up from
// anywhere and updated sparsely by their owners.
//
// Ids and ranges. ranges[r] = [begin, end) is what rank r (a rank of the RpcEndpoint) owns;
// ranges are disjoint, need not be adjacent nor cover [0, num_nodes): for one node type of a
// typed partition, ranges[p] is part p's range of that type, and in server-client mode the
// trainers' ranges are empty. In replicated mode (every rank maps the whole graph) one rank
// should own the whole range and the others none. An id in no range is an Error.
//
// Initial values are a pure function of (seed, table id, the row's ORIGINAL id, column), so
// a table is the same for any partitioning: row x of original id o is
//   x[j] = init_scale * (2 u_j - 1),  u_j = the j-th Rng::uniform() of
//   Rng(stream_key(seed, kEmbeddingStream, table_id, o))           (core/random.h),
// i.e. uniform in [-init_scale, init_scale) (DGL's R-GCN example: uniform(-1, 1)).
//
// Updates. push_gradients() sums the gradients of repeated ids (in input order), keeps the
// owned rows' sums pending here and sends every owner the rows it owns (one request per
// owner, all in flight, acknowledged before it returns); an owner keeps what it receives
// pending, per source rank. apply_pending() then applies, for each pending row, the sum of the
// sources' gradients in source-rank order followed by one optimizer step, so the result does
// not depend on message arrival order, and equals (up to the order of float additions) the
// result of one rank pushing every gradient. Gradients are summed, never averaged: a trainer
// that averages its dense gradients over R ranks scales its embedding gradients by 1/R first.
//
// Per-step contract of the trainer (every rank of the job that owns rows or trains):
//   1. lookup() the rows of the step's batch (training thread, or its pipeline once the
//      previous step's 5. passed);
//   2. forward/backward; every trainer push_gradients() its step's gradients (may be none);
//   3. a collective barrier among the trainers (the gradient allreduce is one): every push
//      of the step has arrived at its owner;
//   4. every owner applies: a worker calls apply_pending(); in server-client mode, where the
//      owners (servers) do not train, ONE trainer calls apply_remote(servers);
//   5. another barrier among the trainers (e.g. the next step's first collective, or the
//      optimizer's) before any rank's next lookup().
// Lookups overlapping an apply anywhere in the job are memory-safe (a reader/writer lock) but
// may see old or new rows: do not let them.
//
// Serving side: add_routes() registers the table's request handlers on the router of every
// rank before its RpcEndpoint starts (route kinds: embedding_request_kind()); attach() then
// gives the table that endpoint for its own requests.
//
// Optimizers: sparse (only rows with a gradient change), per-row state in float32; the
// rules (SGD, Adagrad, Adam) live in optim/sparse_optimizer.h, which this table calls through
// optim::RowOptimizer under its exclusive lock.
//
// State (checkpoints): serialize_state() writes the owned rows and optimizer state (a
// versioned, checksummed byte string: store/embedding_format.h, docs/formats.md);
// load_state() reads it back into a table of the same table id, dim, owned range and
// optimizer, else FormatError naming the source. In server-client mode a trainer reaches the
// servers' state with fetch_remote_state() and load_remote_state().
//
// Thread-safety: lookup() may be called from several threads at once and concurrently with
// the handlers; push_gradients(), apply_pending(), apply_remote() and the state calls from
// one thread (the training thread), never concurrently with each other.
#include <absl/container/flat_hash_map.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "partita/comm/request_kinds.h"
#include "partita/comm/rpc.h"
#include "partita/comm/wire.h"
#include "partita/core/array_view.h"
#include "partita/optim/sparse_optimizer.h"

namespace partita::store {

// The optimizer's kind and options (optim/sparse_optimizer.h), by the names store's callers
// know.
using optim::SparseOptimizer;
using optim::SparseOptimizerOptions;

struct EmbeddingOptions {
  int64_t dim = 0;  // > 0
  // Distinct for the tables of one job, in [0, kMaxEmbeddingTables): keys the route kinds
  // and the initial values.
  int table_id = 0;
  uint64_t seed = 0;
  float init_scale = 1.0f;  // initial values uniform in [-init_scale, init_scale)
  SparseOptimizerOptions optimizer;
};

// Salt of the initial values' random streams (see Initial values above).
constexpr uint64_t kEmbeddingStream = 0x454d42494e4954ULL;  // "EMBINIT"
constexpr int kMaxEmbeddingTables = 1 << 16;

// Request kinds of a table's routes: lookup, push, apply, state, load. Layouts (after the
// u64 kind; arrays are a u64 count then the values, comm/wire.h):
//   lookup  request: i64 ids[] (owned by the receiver)    reply: f32 rows[] ([ids, dim])
//   push    request: i64 ids[], f32 grads[] ([ids, dim])  reply: empty
//   apply   request: nothing                              reply: empty
//   state   request: nothing                              reply: the table state, raw
//   load    request: char source[], u8 state[]           reply: empty
enum class EmbeddingOp : uint64_t { kLookup = 0, kPush = 1, kApply = 2, kState = 3, kLoad = 4 };
// The registry's embedding range (comm/request_kinds.h), indexed by table id and operation.
inline uint64_t embedding_request_kind(int table_id, EmbeddingOp op) {
  return request_kind(RequestService::kEmbedding,
                      (static_cast<uint64_t>(table_id) << 8) | static_cast<uint64_t>(op));
}

struct IdRange {
  int64_t begin = 0;
  int64_t end = 0;  // exclusive; end == begin: empty
  int64_t size() const { return end - begin; }
};

struct EmbeddingStats {
  int64_t local_rows = 0;       // rows looked up from this rank's own table
  int64_t remote_rows = 0;      // rows looked up from other ranks
  int64_t remote_requests = 0;  // lookup and push requests sent
  int64_t remote_bytes = 0;     // request and reply payload bytes of lookups and pushes
  int64_t pushed_rows = 0;      // distinct rows pushed (after summing repeats), local + remote
  int64_t applied_rows = 0;     // rows this rank updated in apply_pending()
};

class DistEmbedding {
 public:
  // `ranges`: every rank's owned range (ranges.size() ranks); `rank` is this one;
  // `original_ids`: the dataset ids of the owned rows, ranges[rank].size() of them (copied;
  // they only key the initial values). Throws UsageError on bad options, overlapping ranges
  // or a wrong number of original ids.
  DistEmbedding(const EmbeddingOptions& options, std::vector<IdRange> ranges, int rank,
                ArrayView<const int64_t> original_ids);
  DistEmbedding(const DistEmbedding&) = delete;
  DistEmbedding& operator=(const DistEmbedding&) = delete;

  // Registers this table's handlers (lookup, push, apply, state, load). The table must
  // outlive the endpoint that serves them.
  void add_routes(RpcRouter& router);
  // The endpoint for this rank's own requests; null when it will never need another rank
  // (then a remote id throws Error). Its ranks must be the ranks of `ranges`. Set it before
  // the first lookup or push.
  void attach(RpcEndpoint* endpoint);

  int64_t dim() const { return options_.dim; }
  int table_id() const { return options_.table_id; }
  const EmbeddingOptions& options() const { return options_; }
  int rank() const { return rank_; }
  const std::vector<IdRange>& ranges() const { return ranges_; }
  IdRange owned() const { return ranges_[static_cast<size_t>(rank_)]; }
  bool owns(int64_t id) const { return id >= owned().begin && id < owned().end; }
  // The rank owning `id`; throws Error when no range holds it.
  int owner_rank(int64_t id) const;

  // out: [ids.size(), dim] row-major, in input order (repeats allowed). Throws Error on an
  // id no rank owns, TimeoutError/CommError from remote owners. Thread-safe.
  void lookup(ArrayView<const int64_t> ids, float* out);

  // grads: [ids.size(), dim] row-major. Sends and keeps pending as described above; returns
  // once every owner acknowledged. Throws as lookup().
  void push_gradients(ArrayView<const int64_t> ids, const float* grads);
  // Applies every pending gradient of the owned rows (see Updates) and clears them.
  void apply_pending();
  // Asks each of `owners` (other ranks) to apply_pending() on its table, all in flight;
  // returns once all did. For server-client mode (see the contract).
  void apply_remote(const std::vector<int>& owners);
  // Distinct owned rows with a gradient pending.
  int64_t pending_rows() const;

  // The owned rows and optimizer state as bytes (see State). No gradient may be pending
  // (Error otherwise).
  std::vector<uint8_t> serialize_state() const;
  // Replaces the owned rows and optimizer state by `bytes` from serialize_state(). Throws
  // FormatError naming `source` (e.g. the checkpoint file) on a corrupt string or one of a
  // table with another id, dim, range or optimizer; Error if gradients are pending.
  void load_state(const uint8_t* data, size_t size, const std::string& source);
  // serialize_state() / load_state() of rank `owner`, through its routes; the owner's errors
  // come back as CommError with its message.
  std::vector<uint8_t> fetch_remote_state(int owner);
  void load_remote_state(int owner, std::vector<uint8_t> bytes, const std::string& source);

  EmbeddingStats stats() const;

 private:
  // Gradients one source rank pushed since the last apply: row (local index) -> slot of
  // `grads` ([slots, dim]), summed over that source's pushes in push order.
  struct Pending {
    absl::flat_hash_map<int64_t, int64_t> slot;
    std::vector<int64_t> rows;  // slot -> row, in first-push order
    std::vector<float> grads;
  };
  // Adds `n` rows of gradients (owned ids) from `source` to its pending set.
  void add_pending(int source, const int64_t* ids, const float* grads, int64_t n);
  // Copies the owned row of `id` to dst (under a shared lock held by the caller).
  void copy_row(int64_t id, float* dst) const;
  // Sends each rank r the positions[r] (indices into the caller's arrays) as requests of
  // `kind` of at most slice_rows positions, all in flight at once; fill(slice, writer) writes
  // a request's payload after the kind, on_reply(rank, slice, reply bytes) reads its reply.
  template <class Fill, class OnReply>
  void exchange(RpcEndpoint& ep, uint64_t kind, const std::vector<std::vector<int64_t>>& positions,
                size_t slice_rows, Fill fill, OnReply on_reply);
  RpcEndpoint& endpoint(const char* what) const;

  EmbeddingOptions options_;
  std::vector<IdRange> ranges_;
  std::vector<int> by_begin_;  // ranks with non-empty ranges, ascending begin
  int rank_ = 0;
  RpcEndpoint* endpoint_ = nullptr;

  mutable std::shared_mutex table_mutex_;           // rows_ and the optimizer state
  std::vector<float> rows_;                         // [owned().size(), dim]
  std::unique_ptr<optim::RowOptimizer> optimizer_;  // over rows_

  mutable std::mutex pending_mutex_;
  std::vector<Pending> pending_;  // by source rank

  std::atomic<int64_t> local_rows_{0}, remote_rows_{0}, remote_requests_{0}, remote_bytes_{0},
      pushed_rows_{0}, applied_rows_{0};
};

}  // namespace partita::store
