#pragma once
// Process-wide malloc policy for message buffers (glibc; elsewhere a no-op).
//
// Why: glibc serves each allocation over its dynamic mmap threshold (128 KiB at first) with
// fresh pages and unmaps it on free. A rank moving multi-MiB requests and replies then
// page-faults every byte of every buffer (the kernel zeroes each page) and unmaps it again;
// and between ranks of one host, Open MPI's single copy (CMA, process_vm_readv) pins the
// peer's pages under its mmap lock, which those unmaps take for writing. Measured with
// bench/remote_fetch_bench on 2 ranks fetching from each other at once (6.5 MB replies):
// 0.4-0.9 GB/s per rank with the default policy, 2.0 GB/s with this one.
//
// keep_message_memory() sets M_MMAP_THRESHOLD to 32 MiB (glibc's largest; buffers below it
// come from the heap and are reused) and M_TRIM_THRESHOLD to 256 MiB (free memory kept for
// reuse before any is returned to the kernel). So a rank's resident memory stays near the
// high-water mark of its live buffers plus up to 256 MiB per malloc arena. Idempotent; call
// it before the buffers are allocated (MpiScope's constructor does). Returns false when the
// C library refused (or is not glibc); nothing else changes then.
namespace partita {

bool keep_message_memory();

}  // namespace partita
