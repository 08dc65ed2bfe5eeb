#pragma once
// Host-local reads (issue 23): ranks of one host that opened the same partition directory
// read each other's parts from the mapped files (store/host_parts.h) instead of sending
// feature, label, degree and sampling requests; learned embeddings (store/dist_embedding.h)
// are mutable and stay on requests. Results are identical either way (the sampler's streams
// are keyed by node, sample/sample_key.h); only the traffic changes.
//
// Who may read whose part is decided once at set-up (Session) from one allgather of every
// rank's HostIdentity: same host (host name and boot id) and the same directory (its real
// path, and partita.json's device, inode, size, modification time and a hash of its bytes).
// Anything else (other hosts, a copy of the directory, a different partition) goes through
// requests as before. Pure functions except host_identity(), which reads the file system.
#include <cstdint>
#include <string>
#include <vector>

#include "partita/core/name_table.h"

namespace partita::runtime {

enum class HostLocal {
  kAuto,  // read same-host ranks' parts from memory where the directory is the same
  kOff,   // every remote row through requests
};

// "auto", "off" (the CLI's --host-local and the recorded setting).
const NameTable<HostLocal>& host_local_names();

// Fixed-size, trivially copyable: travels in one allgather.
struct HostIdentity {
  uint64_t host = 0;    // hash of the host name and boot id
  uint64_t dir = 0;     // hash of the directory's identity (see above); 0: unknown
  int32_t enabled = 0;  // this rank's HostLocal is kAuto
  int32_t reserved = 0;
};

// This rank's identity for `parts_dir`. Never throws: a file that cannot be read gives
// dir = 0, which matches no one (requests as before).
HostIdentity host_identity(const std::string& parts_dir, HostLocal mode);

// The ranks whose parts `me` may read from memory: every rank r != me with r < serving_ranks
// (the ranks that serve a part: all of them in worker mode, the servers in server-client
// mode), on the same host with the same directory identity, when `me` is enabled and its
// dir is known. Ascending. `all` is indexed by world rank.
std::vector<int> host_local_peers(const std::vector<HostIdentity>& all, int me, int serving_ranks);

}  // namespace partita::runtime
