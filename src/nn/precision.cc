// Precision helpers: see precision.h.
#include "partita/nn/precision.h"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>

namespace partita::nn {

const char* precision_name(Precision p) { return name_of(precision_names(), p).c_str(); }

bool cpu_supports_bf16() {
  const char* off = std::getenv("PARTITA_NO_BF16");
  if (off != nullptr && std::strcmp(off, "") != 0 && std::strcmp(off, "0") != 0) return false;
#if defined(__x86_64__)
  // __builtin_cpu_supports checks the OS's XSAVE support of the AVX-512 state too.
  if (!__builtin_cpu_supports("avx512f")) return false;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 5)))  // AVX512_BF16
    return true;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (edx & (1u << 22)))  // AMX-BF16
    return true;
#endif
  return false;
}

}  // namespace partita::nn
