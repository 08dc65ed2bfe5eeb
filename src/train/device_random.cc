// See device_random.h.
#include "device_random.h"

namespace partita::train::device_random {
namespace {

// The constants of core/random.h, as int64 bit patterns.
constexpr int64_t kGolden = static_cast<int64_t>(0x9e3779b97f4a7c15ULL);
constexpr int64_t kMul1 = static_cast<int64_t>(0xbf58476d1ce4e5b9ULL);
constexpr int64_t kMul2 = static_cast<int64_t>(0x94d049bb133111ebULL);
constexpr int64_t kStreamAdd = static_cast<int64_t>(0x632be59bd9b4e019ULL);
constexpr int64_t kLow32 = 0xffffffffLL;

// x >> s as uint64_t (torch's shift of int64 is arithmetic: the sign bits are masked off).
torch::Tensor shift_right(const torch::Tensor& x, int s) {
  return x.bitwise_right_shift(s).bitwise_and_((int64_t{1} << (64 - s)) - 1);
}

// mix64 without its first addition: Rng::next's finalizer.
torch::Tensor finalize(torch::Tensor z) {
  z = z.bitwise_xor(shift_right(z, 30)).mul_(kMul1);
  z = z.bitwise_xor(shift_right(z, 27)).mul_(kMul2);
  return z.bitwise_xor(shift_right(z, 31));
}

}  // namespace

torch::Tensor mix64(const torch::Tensor& x) { return finalize(x.add(kGolden)); }

torch::Tensor stream_key(const torch::Tensor& key, const torch::Tensor& a) {
  return mix64(mix64(key.bitwise_xor(mix64(a.add(kStreamAdd)))));
}

torch::Tensor stream_key(uint64_t key, const torch::Tensor& a) {
  return mix64(mix64(mix64(a.add(kStreamAdd)).bitwise_xor_(static_cast<int64_t>(key))));
}

torch::Tensor draw(const torch::Tensor& key, const torch::Tensor& draw) {
  // The state after draw + 1 calls is key + (draw + 1) * golden: mix64(key + draw * golden).
  return mix64(key + draw.mul(kGolden));
}

torch::Tensor below(const torch::Tensor& x, const torch::Tensor& n) {
  // x = hi * 2^32 + lo; (x * n) >> 64 = (hi * n + ((lo * n) >> 32)) >> 32. With n < 2^31
  // every partial product and the sum stay below 2^63: no lane overflows.
  const torch::Tensor hi = shift_right(x, 32);
  const torch::Tensor lo = x.bitwise_and(kLow32);
  return hi.mul(n).add_(lo.mul(n).bitwise_right_shift_(32)).bitwise_right_shift_(32);
}

torch::Tensor open_unit(const torch::Tensor& x) {
  return shift_right(x, 11).add_(1).to(torch::kFloat64).mul_(0x1.0p-53);
}

}  // namespace partita::train::device_random
