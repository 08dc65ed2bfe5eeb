#include "partita/comm/wire_version.h"

#include <vector>

#include "partita/comm/collectives.h"
#include "partita/comm/errors.h"
#include "partita/core/error.h"

namespace partita {

void check_wire_versions(Collectives& coll, uint32_t mine) {
  const std::vector<uint32_t> all = coll.allgather(std::vector<uint32_t>{mine});
  PARTITA_CHECK(static_cast<int>(all.size()) == coll.size(), CommError,
                "internal: {} wire versions gathered from {} ranks", all.size(), coll.size());
  for (int r = 1; r < coll.size(); ++r) {
    PARTITA_CHECK(all[static_cast<size_t>(r)] == all[0], CommError,
                  "rank {} speaks wire version {} and rank 0 version {}: every rank of a job "
                  "must run the same build",
                  r, all[static_cast<size_t>(r)], all[0]);
  }
}

}  // namespace partita
