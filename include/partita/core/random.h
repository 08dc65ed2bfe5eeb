#pragma once
// Counter-based randomness: every stream is derived from (seed, key...) by hashing, so a
// result never depends on thread count or on the order in which streams are consumed.
#include <cmath>
#include <cstdint>

namespace partita {

// SplitMix64 finalizer: a bijective 64-bit mix with good avalanche.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Key of an independent stream: hash_combine(seed, a, b, ...).
inline uint64_t stream_key(uint64_t seed) { return mix64(seed); }
template <class... Rest>
uint64_t stream_key(uint64_t seed, uint64_t a, Rest... rest) {
  return stream_key(mix64(seed ^ mix64(a + 0x632be59bd9b4e019ULL)), static_cast<uint64_t>(rest)...);
}

// A small fast generator (SplitMix64 sequence) seeded from a stream key.
class Rng {
 public:
  explicit Rng(uint64_t key) : state_(key) {}
  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias < n / 2^64).
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  // Uniform double in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Standard normal (Box-Muller; the second value is discarded for simplicity).
  double normal() {
    double u1 = uniform();
    double u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

}  // namespace partita
