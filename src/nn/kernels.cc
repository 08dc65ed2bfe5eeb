// Kernels of kernels.h. The row loops are compiled for x86-64-v4 (AVX-512), v3 (AVX2, FMA)
// and the baseline
// (target_clones, chosen by CPU features when the program loads), so the build stays
// portable.
#include "kernels.h"

#include <ATen/Parallel.h>

// at::parallel_for expands `#pragma omp parallel` in this file (ATen/ParallelOpenMP.h):
// without OpenMP every kernel silently runs on one thread.
#if AT_PARALLEL_OPENMP && !defined(_OPENMP)
#error "kernels.cc must be compiled with OpenMP (src/nn/CMakeLists.txt links OpenMP::OpenMP_CXX)"
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#define PARTITA_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define PARTITA_INLINE inline __attribute__((always_inline))

namespace partita::nn::kernels {
namespace {

// Least work (entries + rows) per task of parallel_rows: enough to amortize the scheduling.
constexpr int64_t kMinTaskWork = 512;

// The compute type of a value type (see kernels.h).
template <class T>
struct Compute {
  using type = float;
};
template <>
struct Compute<double> {
  using type = double;
};

PARTITA_INLINE float load(const float* p, int64_t i) { return p[i]; }
PARTITA_INLINE double load(const double* p, int64_t i) { return p[i]; }
PARTITA_INLINE float load(const uint16_t* p, int64_t i) {
  const uint32_t u = static_cast<uint32_t>(p[i]) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
PARTITA_INLINE void store(float* p, int64_t i, float v) { p[i] = v; }
PARTITA_INLINE void store(double* p, int64_t i, double v) { p[i] = v; }
// Round to nearest even, as torch's float -> bfloat16 conversion (NaN stays NaN).
// Branch-free, so that loops storing bf16 vectorize.
PARTITA_INLINE void store(uint16_t* p, int64_t i, float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (u >> 16) | 0x40u;
  const uint32_t is_nan = 0u - static_cast<uint32_t>((u & 0x7fffffffu) > 0x7f800000u);
  p[i] = static_cast<uint16_t>((rounded & ~is_nan) | (quiet_nan & is_nan));
}

PARTITA_INLINE int64_t edge_of(const Csr& c, int64_t k) { return c.eid ? c.eid[k] : k; }

// Runs f(begin, end) over rows [0, c.rows) split into one range per intra-op thread, each
// with about the same work (entries + rows), not the same row count: sampled blocks are
// skewed (a hub src row of the transposed block holds thousands of entries), and
// at::parallel_for hands each thread an equal share of its range. Which thread writes a
// row changes nothing in it, so results stay the same for any thread count.
template <class F>
void parallel_rows(const Csr& c, F&& f) {
  const int64_t rows = c.rows;
  if (rows <= 0) return;
  const int64_t first = c.ptr[0];
  const int64_t total = c.ptr[rows] - first + rows;
  const int64_t tasks =
      std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), total / kMinTaskWork));
  // The first row r whose work before it (ptr[r] - first + r) reaches w.
  const auto row_at = [&](int64_t w) {
    int64_t lo = 0, hi = rows;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (c.ptr[mid] - first + mid < w)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };
  at::parallel_for(0, tasks, 1, [&](int64_t tb, int64_t te) {
    for (int64_t t = tb; t < te; ++t) {
      const int64_t begin = t == 0 ? 0 : row_at(total * t / tasks);
      const int64_t end = t + 1 == tasks ? rows : row_at(total * (t + 1) / tasks);
      if (begin < end) f(begin, end);
    }
  });
}

// Gathered rows are fetched kPrefetchEdges entries ahead (across row boundaries: entries are
// contiguous in col), every cache line of them: the gathers are latency-bound otherwise.
constexpr int64_t kPrefetchEdges = 12;

template <class T>
PARTITA_INLINE void prefetch_row(const T* row, int64_t bytes) {
  for (int64_t b = 0; b < bytes; b += 64)
    __builtin_prefetch(reinterpret_cast<const char*>(row) + b);
}

template <class T, class C>
PARTITA_INLINE void spmm_rows_impl(const Csr& c, const T* x, const C* w, int64_t heads, int64_t dim,
                                   T* out, int64_t begin, int64_t end, C* acc) {
  const int64_t width = heads * dim;
  const int64_t row_bytes = width * static_cast<int64_t>(sizeof(T));
  const int64_t last = c.ptr[end];
  for (int64_t k = c.ptr[begin]; k < std::min(last, c.ptr[begin] + kPrefetchEdges); ++k)
    prefetch_row(x + c.col[k] * width, row_bytes);
  for (int64_t r = begin; r < end; ++r) {
    std::fill(acc, acc + width, C(0));
    for (int64_t k = c.ptr[r]; k < c.ptr[r + 1]; ++k) {
      const T* row = x + c.col[k] * width;
      if (k + kPrefetchEdges < last) prefetch_row(x + c.col[k + kPrefetchEdges] * width, row_bytes);
      const C* wk = w ? w + edge_of(c, k) * heads : nullptr;
      for (int64_t h = 0; h < heads; ++h) {
        const C wh = wk ? wk[h] : C(1);
        C* a = acc + h * dim;
        const T* xr = row + h * dim;
        for (int64_t d = 0; d < dim; ++d) a[d] += wh * load(xr, d);
      }
    }
    T* o = out + r * width;
    for (int64_t f = 0; f < width; ++f) store(o, f, acc[f]);
  }
}

template <class T, class C>
PARTITA_INLINE void edge_dot_rows_impl(const Csr& c, const T* a, const T* b, int64_t heads,
                                       int64_t dim, C* out, int64_t begin, int64_t end) {
  const int64_t width = heads * dim;
  for (int64_t r = begin; r < end; ++r) {
    const T* ar = a + r * width;
    for (int64_t k = c.ptr[r]; k < c.ptr[r + 1]; ++k) {
      const T* br = b + c.col[k] * width;
      C* o = out + edge_of(c, k) * heads;
      for (int64_t h = 0; h < heads; ++h) {
        C s = 0;
        for (int64_t d = h * dim; d < (h + 1) * dim; ++d) s += load(ar, d) * load(br, d);
        o[h] = s;
      }
    }
  }
}

// lowbias32 (a bijective 32-bit mix with good avalanche); vectorizes (32-bit multiplies).
PARTITA_INLINE uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

template <class T>
PARTITA_INLINE void dropout_range_impl(const T* x, T* out, int64_t begin, int64_t end,
                                       uint32_t threshold, float scale, uint32_t k0, uint32_t k1) {
  using C = typename Compute<T>::type;
  // 32-bit counter and unconditional load: the loop vectorizes (n < 2^32, kernels.h).
  const T* xb = x + begin;
  T* ob = out + begin;
  const auto base = static_cast<uint32_t>(begin), n = static_cast<uint32_t>(end - begin);
  for (uint32_t j = 0; j < n; ++j) {
    const uint32_t h = mix32(mix32((base + j) ^ k0) + k1);
    const C v = load(xb, j) * static_cast<C>(scale);
    store(ob, j, h >= threshold ? v : C(0));
  }
}

// One compiled clone set per value type.
#define PARTITA_ROW_KERNELS(T)                                                                   \
  PARTITA_CLONES void spmm_rows(const Csr& c, const T* x, const Compute<T>::type* w,             \
                                int64_t heads, int64_t dim, T* out, int64_t begin, int64_t end,  \
                                Compute<T>::type* acc) {                                         \
    spmm_rows_impl(c, x, w, heads, dim, out, begin, end, acc);                                   \
  }                                                                                              \
  PARTITA_CLONES void edge_dot_rows(const Csr& c, const T* a, const T* b, int64_t heads,         \
                                    int64_t dim, Compute<T>::type* out, int64_t begin,           \
                                    int64_t end) {                                               \
    edge_dot_rows_impl(c, a, b, heads, dim, out, begin, end);                                    \
  }                                                                                              \
  PARTITA_CLONES void dropout_range(const T* x, T* out, int64_t begin, int64_t end,              \
                                    uint32_t threshold, float scale, uint32_t k0, uint32_t k1) { \
    dropout_range_impl(x, out, begin, end, threshold, scale, k0, k1);                            \
  }
PARTITA_ROW_KERNELS(float)
PARTITA_ROW_KERNELS(uint16_t)
PARTITA_ROW_KERNELS(double)
#undef PARTITA_ROW_KERNELS

template <class C>
PARTITA_INLINE C leaky(C v, C slope) {
  return v > 0 ? v : slope * v;
}

// Calls f(T*) with the value type of dt.
template <class F>
void with_type(Dtype dt, F&& f) {
  switch (dt) {
    case Dtype::kF32:
      f(static_cast<float*>(nullptr));
      return;
    case Dtype::kBF16:
      f(static_cast<uint16_t*>(nullptr));
      return;
    case Dtype::kF64:
      f(static_cast<double*>(nullptr));
      return;
  }
}

// Calls f(C*) with the compute type of dt: double for kF64, float otherwise.
template <class F>
void with_compute_type(Dtype dt, F&& f) {
  if (dt == Dtype::kF64) {
    f(static_cast<double*>(nullptr));
  } else {
    f(static_cast<float*>(nullptr));
  }
}

template <class C>
void gat_forward_impl(const Csr& c, const C* score_src, const C* score_dst, const C* score_edge,
                      int64_t heads, C slope, C* alpha) {
  parallel_rows(c, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t lo = c.ptr[r], hi = c.ptr[r + 1];
      for (int64_t h = 0; h < heads; ++h) {
        const C sd = score_dst[r * heads + h];
        C max = -std::numeric_limits<C>::infinity();
        for (int64_t k = lo; k < hi; ++k) {
          C pre = score_src[c.col[k] * heads + h] + sd;
          if (score_edge != nullptr) pre += score_edge[edge_of(c, k) * heads + h];
          const C e = leaky(pre, slope);
          alpha[edge_of(c, k) * heads + h] = e;
          max = std::max(max, e);
        }
        C sum = 0;
        for (int64_t k = lo; k < hi; ++k) {
          C& a = alpha[edge_of(c, k) * heads + h];
          a = std::exp(a - max);
          sum += a;
        }
        const C inv = C(1) / sum;
        for (int64_t k = lo; k < hi; ++k) alpha[edge_of(c, k) * heads + h] *= inv;
      }
    }
  });
}

template <class C>
void gat_backward_impl(const Csr& c, const Csr& by_src, const C* score_src, const C* score_dst,
                       const C* score_edge, const C* alpha, const C* grad_alpha, int64_t heads,
                       C slope, C* grad_pre, C* grad_score_src, C* grad_score_dst) {
  parallel_rows(c, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t lo = c.ptr[r], hi = c.ptr[r + 1];
      for (int64_t h = 0; h < heads; ++h) {
        C dot = 0;
        for (int64_t k = lo; k < hi; ++k) {
          const int64_t e = edge_of(c, k) * heads + h;
          dot += alpha[e] * grad_alpha[e];
        }
        const C sd = score_dst[r * heads + h];
        C sum = 0;
        for (int64_t k = lo; k < hi; ++k) {
          const int64_t e = edge_of(c, k) * heads + h;
          const C g = alpha[e] * (grad_alpha[e] - dot);
          C pre = score_src[c.col[k] * heads + h] + sd;
          if (score_edge != nullptr) pre += score_edge[e];
          grad_pre[e] = pre > 0 ? g : slope * g;
          sum += grad_pre[e];
        }
        grad_score_dst[r * heads + h] = sum;
      }
    }
  });
  parallel_rows(by_src, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      C* g = grad_score_src + j * heads;
      std::fill(g, g + heads, C(0));
      for (int64_t k = by_src.ptr[j]; k < by_src.ptr[j + 1]; ++k) {
        const C* gp = grad_pre + edge_of(by_src, k) * heads;
        for (int64_t h = 0; h < heads; ++h) g[h] += gp[h];
      }
    }
  });
}

template <class T>
void relu_sum_impl(const Csr& c, const T* x, const T* e, int64_t width, T* out) {
  using C = typename Compute<T>::type;
  parallel_rows(c, [&](int64_t begin, int64_t end) {
    std::vector<C> acc(static_cast<size_t>(width));
    for (int64_t r = begin; r < end; ++r) {
      std::fill(acc.begin(), acc.end(), C(0));
      for (int64_t k = c.ptr[r]; k < c.ptr[r + 1]; ++k) {
        const T* xr = x + c.col[k] * width;
        const T* er = e + edge_of(c, k) * width;
        for (int64_t f = 0; f < width; ++f) {
          const C v = load(xr, f) + load(er, f);
          acc[f] += v > 0 ? v : C(0);
        }
      }
      T* o = out + r * width;
      for (int64_t f = 0; f < width; ++f) store(o, f, acc[f]);
    }
  });
}

template <class T>
void relu_sum_backward_impl(const Csr& c, const Csr& by_src, const T* x, const T* e,
                            const T* grad_out, int64_t width, T* grad_x, T* grad_e) {
  using C = typename Compute<T>::type;
  parallel_rows(c, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* g = grad_out + r * width;
      for (int64_t k = c.ptr[r]; k < c.ptr[r + 1]; ++k) {
        const T* xr = x + c.col[k] * width;
        const int64_t id = edge_of(c, k);
        const T* er = e + id * width;
        T* ge = grad_e + id * width;
        for (int64_t f = 0; f < width; ++f)
          store(ge, f, load(xr, f) + load(er, f) > 0 ? load(g, f) : C(0));
      }
    }
  });
  parallel_rows(by_src, [&](int64_t begin, int64_t end) {
    std::vector<C> acc(static_cast<size_t>(width));
    for (int64_t j = begin; j < end; ++j) {
      std::fill(acc.begin(), acc.end(), C(0));
      for (int64_t k = by_src.ptr[j]; k < by_src.ptr[j + 1]; ++k) {
        const T* ge = grad_e + edge_of(by_src, k) * width;
        for (int64_t f = 0; f < width; ++f) acc[f] += load(ge, f);
      }
      T* o = grad_x + j * width;
      for (int64_t f = 0; f < width; ++f) store(o, f, acc[f]);
    }
  });
}

}  // namespace

void relu_sum(const Csr& by_dst, const void* x, const void* e, int64_t width, void* out, Dtype dt) {
  with_type(dt, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    relu_sum_impl(by_dst, static_cast<const T*>(x), static_cast<const T*>(e), width,
                  static_cast<T*>(out));
  });
}

void relu_sum_backward(const Csr& by_dst, const Csr& by_src, const void* x, const void* e,
                       const void* grad_out, int64_t width, void* grad_x, void* grad_e, Dtype dt) {
  with_type(dt, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    relu_sum_backward_impl(by_dst, by_src, static_cast<const T*>(x), static_cast<const T*>(e),
                           static_cast<const T*>(grad_out), width, static_cast<T*>(grad_x),
                           static_cast<T*>(grad_e));
  });
}

void spmm(const Csr& csr, const void* x, const void* w, int64_t heads, int64_t head_dim, void* out,
          Dtype dt) {
  with_type(dt, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    using C = typename Compute<T>::type;
    parallel_rows(csr, [&](int64_t begin, int64_t end) {
      std::vector<C> acc(static_cast<size_t>(heads * head_dim));
      spmm_rows(csr, static_cast<const T*>(x), static_cast<const C*>(w), heads, head_dim,
                static_cast<T*>(out), begin, end, acc.data());
    });
  });
}

void edge_dot(const Csr& csr, const void* a, const void* b, int64_t heads, int64_t head_dim,
              void* out, Dtype dt) {
  with_type(dt, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    using C = typename Compute<T>::type;
    parallel_rows(csr, [&](int64_t begin, int64_t end) {
      edge_dot_rows(csr, static_cast<const T*>(a), static_cast<const T*>(b), heads, head_dim,
                    static_cast<C*>(out), begin, end);
    });
  });
}

void gat_softmax_forward(const Csr& by_dst, const void* score_src, const void* score_dst,
                         const void* score_edge, int64_t heads, double slope, void* alpha,
                         Dtype dt) {
  with_compute_type(dt, [&](auto* type) {
    using C = std::remove_pointer_t<decltype(type)>;
    gat_forward_impl(by_dst, static_cast<const C*>(score_src), static_cast<const C*>(score_dst),
                     static_cast<const C*>(score_edge), heads, static_cast<C>(slope),
                     static_cast<C*>(alpha));
  });
}

void gat_softmax_backward(const Csr& by_dst, const Csr& by_src, const void* score_src,
                          const void* score_dst, const void* score_edge, const void* alpha,
                          const void* grad_alpha, int64_t heads, double slope, void* grad_pre,
                          void* grad_score_src, void* grad_score_dst, Dtype dt) {
  with_compute_type(dt, [&](auto* type) {
    using C = std::remove_pointer_t<decltype(type)>;
    gat_backward_impl(by_dst, by_src, static_cast<const C*>(score_src),
                      static_cast<const C*>(score_dst), static_cast<const C*>(score_edge),
                      static_cast<const C*>(alpha), static_cast<const C*>(grad_alpha), heads,
                      static_cast<C>(slope), static_cast<C*>(grad_pre),
                      static_cast<C*>(grad_score_src), static_cast<C*>(grad_score_dst));
  });
}

void dropout(const void* x, void* out, int64_t n, uint32_t threshold, float scale, uint64_t key,
             Dtype dt) {
  const auto k0 = static_cast<uint32_t>(key);
  const auto k1 = static_cast<uint32_t>(key >> 32);
  with_type(dt, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    at::parallel_for(0, n, int64_t{1} << 16, [&](int64_t begin, int64_t end) {
      dropout_range(static_cast<const T*>(x), static_cast<T*>(out), begin, end, threshold, scale,
                    k0, k1);
    });
  });
}

}  // namespace partita::nn::kernels
