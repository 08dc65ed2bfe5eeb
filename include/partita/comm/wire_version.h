#pragma once
// The version of what ranks send each other (docs/formats.md, "RPC messages"): the message
// frames of comm/rpc.h, the registry of comm/request_kinds.h and every service's request and
// reply layouts. A change to any of them takes the next number.
//
// check_wire_versions() is collective: every rank of `coll` calls it once at start-up,
// before its first request. It throws CommError on every rank, naming the first rank whose
// version differs from rank 0's and both versions, when the job mixes builds (hosts running
// different binaries under one path), so such a job stops with one clear line instead of
// misreading bytes. Blocks like any collective of `coll`.
#include <cstdint>

namespace partita {

class Collectives;

// 2: typed_features (issue 28); 3: node_times (41); 4: sample_hop edge ids, edge_features (41)
inline constexpr uint32_t kWireVersion = 4;

// `mine`: this rank's version (tests pass others).
void check_wire_versions(Collectives& coll, uint32_t mine = kWireVersion);

}  // namespace partita
