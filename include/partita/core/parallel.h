#pragma once
// Static fork-join over an index range. Chunks are fixed by (begin, end, chunk) alone, so
// a computation keyed by chunk index is identical whatever the thread count.
#include <cstdint>
#include <functional>

namespace partita {

// Number of threads to use when the user gave `requested` (<= 0: all hardware threads).
int resolve_threads(int requested);

// Calls fn(chunk_begin, chunk_end) for consecutive chunks of [begin, end) of at most
// `chunk` indices, on up to `threads` threads. The first exception thrown by fn is
// rethrown after all threads have joined.
void parallel_chunks(int64_t begin, int64_t end, int64_t chunk, int threads,
                     const std::function<void(int64_t, int64_t)>& fn);

}  // namespace partita
