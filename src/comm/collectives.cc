#include "partita/comm/collectives.h"

#include <fmt/format.h>

#include <exception>

namespace partita {

size_t elem_size(ElemType type) {
  return type == ElemType::kInt32 || type == ElemType::kFloat32 ? 4 : 8;
}

std::string Collectives::diagnose_timeout() const {
  if (!diagnose_) return "";
  try {
    return "; " + diagnose_();
  } catch (const std::exception& e) {
    return fmt::format("; probing the other ranks failed: {}", e.what());
  }
}

}  // namespace partita
