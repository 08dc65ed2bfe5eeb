#pragma once
// Partita's version, as `partita --version` and the run record of --metrics-out give it.
// The top-level CMakeLists.txt refuses to configure unless project(VERSION) says the same.

namespace partita {

inline constexpr char kVersion[] = "0.1.0";

}  // namespace partita
