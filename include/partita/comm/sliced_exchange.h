#pragma once
// Requests to several owners at once, each owner's items cut into slices: the pattern of
// every bulk remote read or write (feature rows, embedding rows and their gradients).
//
// positions[r] lists the items (caller's indices) to send to rank r; empty lists send
// nothing. Slice s of rank r covers positions[r][s*slice_rows, (s+1)*slice_rows). Every slice
// of every rank is in flight at once (comm/rpc.h start_all); replies are handed to on_reply
// in order, each as soon as its call completes, so the caller scatters a slice while the
// owners work on the next ones. Slices keep replies well below the size at which message
// buffers stop being reused (comm/message_memory.h).
//
//   fill(ArrayView<const int64_t> slice, WireWriter& request)   writes a request's body
//       (after the kind, which this writes first);
//   on_reply(int rank, ArrayView<const int64_t> slice, const std::vector<uint8_t>& reply)
//       consumes the reply of that slice.
// Returns the number of requests sent. Throws what the endpoint throws (TimeoutError,
// CommError) or what the callbacks throw; calls still in flight are then abandoned to the
// endpoint, as by any failed finish_all.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "partita/comm/rpc.h"
#include "partita/comm/wire.h"
#include "partita/core/array_view.h"

namespace partita {

template <class Fill, class OnReply>
int64_t sliced_exchange(RpcEndpoint& endpoint, uint64_t kind,
                        const std::vector<std::vector<int64_t>>& positions, size_t slice_rows,
                        Fill fill, OnReply on_reply) {
  std::vector<RpcEndpoint::Pending> calls;
  std::vector<std::vector<std::pair<int, size_t>>> slices;  // per call: (rank, first index)
  for (size_t begin = 0;; begin += slice_rows) {
    std::vector<RpcRequest> requests;
    std::vector<std::pair<int, size_t>> parts;
    for (int r = 0; r < static_cast<int>(positions.size()); ++r) {
      if (positions[r].size() <= begin) continue;
      const size_t n = std::min(slice_rows, positions[r].size() - begin);
      WireWriter request(16 + n * 8);
      request.put<uint64_t>(kind);
      fill(ArrayView<const int64_t>(positions[r].data() + begin, static_cast<int64_t>(n)), request);
      requests.push_back({r, request.take()});
      parts.emplace_back(r, begin);
    }
    if (requests.empty()) break;
    calls.push_back(endpoint.start_all(std::move(requests)));
    slices.push_back(std::move(parts));
  }
  int64_t sent = 0;
  for (size_t c = 0; c < calls.size(); ++c) {
    std::vector<std::vector<uint8_t>> replies = endpoint.finish_all(std::move(calls[c]));
    sent += static_cast<int64_t>(replies.size());
    for (size_t q = 0; q < replies.size(); ++q) {
      const auto [rank, begin] = slices[c][q];
      const size_t n = std::min(slice_rows, positions[static_cast<size_t>(rank)].size() - begin);
      on_reply(rank,
               ArrayView<const int64_t>(positions[static_cast<size_t>(rank)].data() + begin,
                                        static_cast<int64_t>(n)),
               replies[q]);
    }
  }
  return sent;
}

}  // namespace partita
