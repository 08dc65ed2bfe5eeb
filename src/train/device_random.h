#pragma once
// Internal to train/: core/random.h's counter-based streams as torch ops on int64 tensors,
// bit for bit, so that the device sampler (device_sampler.h) draws what the CPU kernel
// (sample/neighbor_kernel.h) draws for the same node. A uint64_t is held in an int64 lane
// as its two's-complement bits: addition, multiplication and xor wrap modulo 2^64 in
// torch's integer kernels on the CPU and on CUDA alike (checked against the scalar code in
// tests/train/device_sampler_test.cc); right shifts are made logical by masking.
// Every function works on any device and keeps its arguments' device.
#include <torch/types.h>

#include <cstdint>

namespace partita::train::device_random {

// mix64 (core/random.h) of every element.
torch::Tensor mix64(const torch::Tensor& x);

// stream_key(key, a) of every pair (broadcast): the key of stream `a` under `key`
// (sample_key.h: node_key(hop_key, node), relation_key(node_key, relation)).
torch::Tensor stream_key(const torch::Tensor& key, const torch::Tensor& a);
torch::Tensor stream_key(uint64_t key, const torch::Tensor& a);

// Rng(key).next() of the (draw + 1)-th call: draw 0 is the first value of stream `key`.
// Broadcasts key [..] against draw [..].
torch::Tensor draw(const torch::Tensor& key, const torch::Tensor& draw);

// Rng::below(n) of the draws `x` (the high 64 bits of x * n), for 1 <= n < 2^31.
torch::Tensor below(const torch::Tensor& x, const torch::Tensor& n);

// The uniform in (0, 1] of the draws `x` that the host's Efraimidis-Spirakis keys take
// (sample/row_algorithms.h: ((x >> 11) + 1) * 2^-53), as float64.
torch::Tensor open_unit(const torch::Tensor& x);

}  // namespace partita::train::device_random
