#pragma once
// The registry of request kinds: every code an RpcRouter routes (the first 8 bytes of a
// request, comm/wire.h), with the service that owns it, declared here and nowhere else.
//
// Contract. Each service owns one entry: a name, the header that documents its request and
// reply layouts (docs/formats.md gathers them), and a range of codes [first, first +
// count). The ranges are disjoint, checked at compile time (static_assert below), so two
// services cannot take the same number; a service derives its codes with request_kind(),
// which refuses an index past its range (a compile error in a constant expression, Error at
// run time). RpcRouter::add refuses a code in no entry and a code registered twice, naming
// both registrants. comm/ knows an entry's name and range only, never what the service does.
//
// Adding a service: append an entry and its RequestService value (same order), pick a range
// that overlaps none (the static_assert says so if it does), document its layouts in its
// owner header and in docs/formats.md, and raise kWireVersion (comm/wire_version.h).
//
// Thread-safety: constants and pure functions only.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace partita {

// The services that own request kinds, indexing kRequestKinds.
enum class RequestService : size_t {
  kFeatures,
  kLabels,
  kSampleHop,
  kDegrees,
  kTypeFeatures,
  kTrainerDone,
  kEmbedding,
  kTest,
  kTypedFeatures,
  kNodeTimes,
  kEdgeFeatures,
};

struct RequestKindEntry {
  RequestService service;
  const char* name;   // short, in error messages
  const char* owner;  // the header that documents the layouts of its requests and replies
  uint64_t first;     // its codes: [first, first + count)
  uint64_t count;
};

// Codes are the ones these services used before the registry existed (ASCII tags for the
// later ones), so the wire did not change.
inline constexpr RequestKindEntry kRequestKinds[] = {
    {RequestService::kFeatures, "features", "store/feature_store.h", 1, 1},
    {RequestService::kLabels, "labels", "store/feature_store.h", 2, 1},
    {RequestService::kSampleHop, "sample_hop", "sample/sample_wire.h", 3, 1},
    {RequestService::kDegrees, "degrees", "store/feature_store.h", 4, 1},
    // "TFEAT"
    {RequestService::kTypeFeatures, "type_features", "store/feature_store.h", 0x5446454154ULL, 1},
    // "TRDONE"
    {RequestService::kTrainerDone, "trainer_done", "runtime/session.cc", 0x5452444f4e45ULL, 1},
    // "EMB" in the top bytes, then (table id << 8 | operation): store/dist_embedding.h.
    {RequestService::kEmbedding, "embedding", "store/dist_embedding.h", 0x454d420000000000ULL,
     uint64_t{1} << 24},
    // Free for tests of comm/ itself; no service of the engine uses it.
    {RequestService::kTest, "test", "tests/comm", 0x5445535400000000ULL, uint64_t{1} << 16},
    // "TFEATS": the rows of ids of several node types in one request (issue 28).
    {RequestService::kTypedFeatures, "typed_features", "store/feature_store.h", 0x544645415453ULL,
     1},
    // "NTIME": node times (node_time.npy), a temporal seed's time (issue 41).
    {RequestService::kNodeTimes, "node_times", "store/feature_store.h", 0x4e54494d45ULL, 1},
    // "EFEAT": edge_feat rows by global edge id (issue 41).
    {RequestService::kEdgeFeatures, "edge_features", "store/feature_store.h", 0x4546454154ULL, 1},
};

inline constexpr size_t kNumRequestServices = sizeof(kRequestKinds) / sizeof(kRequestKinds[0]);

// Whether every entry sits at its service's index, has codes, does not wrap around, and no
// two entries' ranges overlap.
constexpr bool request_kinds_are_valid() {
  for (size_t a = 0; a < kNumRequestServices; ++a) {
    const RequestKindEntry& e = kRequestKinds[a];
    if (static_cast<size_t>(e.service) != a || e.count == 0 || e.first == 0 ||
        e.first + e.count < e.first)
      return false;
    for (size_t b = a + 1; b < kNumRequestServices; ++b) {
      const RequestKindEntry& f = kRequestKinds[b];
      if (e.first < f.first + f.count && f.first < e.first + e.count) return false;
    }
  }
  return true;
}
static_assert(request_kinds_are_valid(),
              "comm/request_kinds.h: an entry is out of order, empty or overlaps another");

constexpr const RequestKindEntry& request_kind_entry(RequestService service) {
  return kRequestKinds[static_cast<size_t>(service)];
}

// The code of `service`'s request number `index` (0 for a service of one code).
constexpr uint64_t request_kind(RequestService service, uint64_t index = 0) {
  const RequestKindEntry& e = request_kind_entry(service);
  if (index >= e.count) throw std::out_of_range("request kind index past its service's range");
  return e.first + index;
}

// The entry whose range holds `code`; nullptr when none does.
constexpr const RequestKindEntry* find_request_kind(uint64_t code) {
  for (const RequestKindEntry& e : kRequestKinds)
    if (code >= e.first && code - e.first < e.count) return &e;
  return nullptr;
}

// The services of one code each, by name (layouts in their owner headers).
inline constexpr uint64_t kRequestFeatures = request_kind(RequestService::kFeatures);
inline constexpr uint64_t kRequestLabels = request_kind(RequestService::kLabels);
inline constexpr uint64_t kRequestSampleHop = request_kind(RequestService::kSampleHop);
inline constexpr uint64_t kRequestDegrees = request_kind(RequestService::kDegrees);
inline constexpr uint64_t kRequestTypeFeatures = request_kind(RequestService::kTypeFeatures);
inline constexpr uint64_t kRequestTrainerDone = request_kind(RequestService::kTrainerDone);
inline constexpr uint64_t kRequestTypedFeatures = request_kind(RequestService::kTypedFeatures);
inline constexpr uint64_t kRequestNodeTimes = request_kind(RequestService::kNodeTimes);
inline constexpr uint64_t kRequestEdgeFeatures = request_kind(RequestService::kEdgeFeatures);

}  // namespace partita
