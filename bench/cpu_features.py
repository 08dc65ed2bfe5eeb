"""What this host's CPU can do, as the benchmarks need to know it before running `partita`."""
import os

NO_BF16 = "this CPU has no native bf16 (AVX512-BF16 or AMX)"


def native_bf16():
    """Whether `partita train --precision bf16` runs here: the CPU multiplies bf16 natively
    (AVX512-BF16 or AMX-BF16) and PARTITA_NO_BF16 does not turn it off, as
    nn::cpu_supports_bf16() decides."""
    if os.environ.get("PARTITA_NO_BF16", "") not in ("", "0"):
        return False
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags
