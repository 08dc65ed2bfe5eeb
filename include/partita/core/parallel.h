#pragma once
// Static fork-join over an index range. Chunks are fixed by (begin, end, chunk) alone, so
// a computation keyed by chunk index is identical whatever the thread count.
#include <cstdint>
#include <functional>

namespace partita {

// Number of threads to use when the user gave `requested` (<= 0: all hardware threads).
int resolve_threads(int requested);

// Calls fn(chunk_begin, chunk_end) for consecutive chunks of [begin, end) of at most
// `chunk` indices, on up to `threads` threads: the caller and up to threads-1 workers of a
// process-wide ThreadPool (thread_pool.h), started once and reused by every call (it grows
// to the largest threads-1 asked for and keeps its workers until exit), so calls start no
// threads. Concurrent calls share those workers; the caller always runs chunks itself, so
// a call completes even while the workers are busy, and fn may call parallel_chunks.
// After the first exception thrown by fn, chunks not yet started are skipped; it is
// rethrown once every started chunk has finished.
void parallel_chunks(int64_t begin, int64_t end, int64_t chunk, int threads,
                     const std::function<void(int64_t, int64_t)>& fn);

// Workers of parallel_chunks' pool so far (diagnostics, tests).
int parallel_chunks_workers();

}  // namespace partita
