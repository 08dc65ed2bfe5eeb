#pragma once
// Partita's version, as `partita --version` and the run record of --metrics-out give it.
// Keep it equal to project(partita VERSION ...) in the top-level CMakeLists.txt.

namespace partita {

inline constexpr char kVersion[] = "0.1.0";

}  // namespace partita
