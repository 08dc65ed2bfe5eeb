# Compiler flags of the PARTITA_FUZZ build: every layer instrumented for libFuzzer's
# coverage feedback and for ASan + UBSan (each finding fatal), with assert() (nlohmann::json's
# too) and libstdc++'s bounds checks on, and debug info for readable stacks. The fuzz
# targets add -fsanitize=fuzzer at link time.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "PARTITA_FUZZ needs clang (libFuzzer), found ${CMAKE_CXX_COMPILER_ID}: "
                      "configure with CC=clang CXX=clang++ (fuzz/build.sh does)")
endif()

set(PARTITA_FUZZ_FLAGS -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                       -fno-omit-frame-pointer -g -O1 -UNDEBUG -D_GLIBCXX_ASSERTIONS)
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer,address,undefined)
check_cxx_source_compiles(
  "#include <cstddef>
   #include <cstdint>
   extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }"
  PARTITA_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT PARTITA_HAVE_LIBFUZZER)
  message(FATAL_ERROR "clang cannot link -fsanitize=fuzzer,address,undefined: install the "
                      "libFuzzer runtime (Debian: libclang-rt-14-dev; scripts/setup.sh does)")
endif()

# ccache hashes the build directory into the key of every -g compile unless a debug prefix
# map hides it: with the map, a fresh clone's fuzz-build (CI's, another worktree's) reuses
# what an earlier one compiled instead of recompiling ~60 instrumented files (fuzz.build:
# ~200 s of CI's two cores). Stacks then name files relative to the build directory.
list(APPEND PARTITA_FUZZ_FLAGS -fdebug-prefix-map=${CMAKE_BINARY_DIR}=.)
add_compile_options(${PARTITA_FUZZ_FLAGS})
add_link_options(-fsanitize=address,undefined)
