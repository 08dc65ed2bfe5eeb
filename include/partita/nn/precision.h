#pragma once
// Numeric precision of a model's activations and matrix products. Parameters, optimizer
// state, the loss and softmax stay float32 in both (the master weights); kBf16 runs the
// layers in bfloat16, where oneDNN reaches AVX512-BF16 / AMX.
#include <string>

#include "partita/core/name_table.h"

namespace partita::nn {

enum class Precision { kFp32, kBf16 };

// The names of the precisions (--precision, checkpoints' settings).
inline const NameTable<Precision>& precision_names() {
  static const NameTable<Precision> names{{"fp32", Precision::kFp32}, {"bf16", Precision::kBf16}};
  return names;
}

// "fp32" or "bf16".
const char* precision_name(Precision p);

// Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX-BF16, with the OS
// saving AVX-512 state). Setting PARTITA_NO_BF16=1 in the environment makes it false, to
// try the refusal path on a machine that has bf16.
bool cpu_supports_bf16();

}  // namespace partita::nn
