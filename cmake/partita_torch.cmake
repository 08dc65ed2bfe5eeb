# Which torch Partita builds against (issue 24; DEVELOPERS.md, "Building against a torch").
#
# One variable selects it:
#   PARTITA_PYTHON  a Python interpreter; the torch it imports is the one the C++ layers
#                   link and the one the Python extension (python/) is built for. Empty
#                   (the default): Debian's libtorch-dev, found by CMake's own search, and
#                   /usr/bin/python3 with python3-torch for the extension, as CI builds.
# Advanced (rarely needed):
#   PARTITA_TORCH_HIDDEN_HEADERS  entries of torch's include dir that must not shadow the
#                   system's copies we link (cmake/partita_torch_headers.cmake).
#   PARTITA_TORCH_IMPORT  AUTO, CONFIG or DIRECT: how cmake/FindTorch.cmake imports torch.
#
# Included once by the top-level CMakeLists.txt. It finds torch there, once, so that every
# directory sees the same imported targets; the find_package(Torch) calls in the layers'
# directories then return at once (cmake/FindTorch.cmake). Sets, for the whole tree:
#   PARTITA_PYTHON_EXECUTABLE  the interpreter of the Python extension and its tests
#   PARTITA_TORCH_VERSION, PARTITA_TORCH_CUDA  as the interpreter reports them (or empty)
# plus what find_package(Torch) sets: TORCH_LIBRARIES, TORCH_INCLUDE_DIRS, TORCH_CXX_FLAGS,
# TORCH_INSTALL_PREFIX.
include_guard(GLOBAL)

# STRING, not FILEPATH: CMake would make a bare `python3` absolute against the current dir.
set(PARTITA_PYTHON "" CACHE STRING
    "Python interpreter whose torch to build against (C++ layers and Python extension); \
empty: Debian's libtorch-dev and /usr/bin/python3")
set(PARTITA_TORCH_HIDDEN_HEADERS "fmt;spdlog;nlohmann" CACHE STRING
    "Entries of torch's include dir hidden so that the system's copies, which we link, are used")
set(PARTITA_TORCH_IMPORT AUTO CACHE STRING
    "How to import torch: CONFIG (its TorchConfig.cmake), DIRECT (an imported target made \
from its folders, needs no CUDA toolkit), AUTO (DIRECT only for a CUDA torch without nvcc)")
set_property(CACHE PARTITA_TORCH_IMPORT PROPERTY STRINGS AUTO CONFIG DIRECT)
mark_as_advanced(PARTITA_TORCH_HIDDEN_HEADERS PARTITA_TORCH_IMPORT)

set(PARTITA_TORCH_VERSION "")
set(PARTITA_TORCH_CUDA "")
unset(PARTITA_TORCH_CXX11_ABI)
set(_partita_torch_dir "")
if(PARTITA_PYTHON)
  # One line each: version, CUDA version (none: a CPU torch), C++11 ABI (1/0), CMake dir,
  # the interpreter's absolute path.
  execute_process(
    COMMAND "${PARTITA_PYTHON}" -c "import sys, torch, torch.utils
print(torch.__version__)
print(torch.version.cuda or 'none')
print(int(torch._C._GLIBCXX_USE_CXX11_ABI))
print(torch.utils.cmake_prefix_path)
print(sys.executable)"
    RESULT_VARIABLE _partita_rc OUTPUT_VARIABLE _partita_out ERROR_VARIABLE _partita_err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _partita_rc EQUAL 0)
    message(FATAL_ERROR "PARTITA_PYTHON=${PARTITA_PYTHON}: `import torch` failed "
                        "(${_partita_rc}):\n${_partita_err}")
  endif()
  string(REPLACE "\n" ";" _partita_out "${_partita_out}")
  list(GET _partita_out -5 PARTITA_TORCH_VERSION)  # the last 5 lines: torch may print before
  list(GET _partita_out -4 PARTITA_TORCH_CUDA)
  if(PARTITA_TORCH_CUDA STREQUAL "none")
    set(PARTITA_TORCH_CUDA "")
  endif()
  list(GET _partita_out -3 PARTITA_TORCH_CXX11_ABI)
  list(GET _partita_out -2 _partita_cmake_prefix)
  list(GET _partita_out -1 PARTITA_PYTHON_EXECUTABLE)
  # Debian's python3-torch ships no CMake files (they are libtorch-dev's, which CMake's
  # own search finds); pip's and conda's torch do.
  if(EXISTS "${_partita_cmake_prefix}/Torch/TorchConfig.cmake")
    set(_partita_torch_dir "${_partita_cmake_prefix}/Torch")
  endif()
  if(PARTITA_TORCH_CUDA)
    set(_partita_kind "CUDA ${PARTITA_TORCH_CUDA}")
  else()
    set(_partita_kind "CPU only")
  endif()
  message(STATUS "partita: torch ${PARTITA_TORCH_VERSION} (${_partita_kind}) of "
                 "${PARTITA_PYTHON_EXECUTABLE}")
elseif(EXISTS /usr/bin/python3)
  # Debian's python3-torch belongs to /usr/bin/python3, even when another python3 (pyenv,
  # a virtualenv) comes first on PATH.
  set(PARTITA_PYTHON_EXECUTABLE /usr/bin/python3)
else()
  find_program(PARTITA_PYTHON_EXECUTABLE python3)
endif()

# Another torch than at the last configure: forget what was found for the old one.
set(_partita_selection "${PARTITA_PYTHON}|${_partita_torch_dir}|${PARTITA_TORCH_IMPORT}")
if(DEFINED PARTITA_TORCH_SELECTED AND NOT PARTITA_TORCH_SELECTED STREQUAL _partita_selection)
  message(STATUS "partita: another torch than at the last configure; finding it afresh")
  foreach(var Torch_DIR Caffe2_DIR TORCH_LIBRARY c10_LIBRARY kineto_LIBRARY C10_CUDA_LIBRARY
              PARTITA_TORCH_PYTHON pybind11_DIR PARTITA_TORCH_LIBRARY_torch
              PARTITA_TORCH_LIBRARY_torch_cpu PARTITA_TORCH_LIBRARY_c10
              PARTITA_TORCH_LIBRARY_torch_cuda PARTITA_TORCH_LIBRARY_c10_cuda)
    unset(${var} CACHE)
  endforeach()
endif()
set(PARTITA_TORCH_SELECTED "${_partita_selection}" CACHE INTERNAL "")
if(_partita_torch_dir)
  set(Torch_DIR "${_partita_torch_dir}" CACHE PATH "The directory of TorchConfig.cmake" FORCE)
endif()

# find_package(Torch) anywhere in the tree goes through cmake/FindTorch.cmake.
list(PREPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}")
find_package(Torch REQUIRED)

# The C++11 ABI: one setting for every translation unit. The system's C++ libraries we link
# (fmt, abseil, GoogleTest, benchmark) use the C++11 ABI, the compiler's default, so a torch
# built with the old ABI cannot link with them; say so now rather than at the link.
if(TORCH_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
  message(FATAL_ERROR
    "The torch at ${TORCH_INSTALL_PREFIX} was built with the pre-C++11 ABI "
    "(-D_GLIBCXX_USE_CXX11_ABI=0), but the system's fmt, abseil and GoogleTest that Partita "
    "links use the C++11 ABI. Use a torch built with the C++11 ABI: pip wheels from 2.7 "
    "on, libtorch's cxx11-abi archives, or Debian's python3-torch (see DEVELOPERS.md).")
endif()
if(CMAKE_CXX_FLAGS MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
  message(FATAL_ERROR "CMAKE_CXX_FLAGS sets -D_GLIBCXX_USE_CXX11_ABI=0, but torch "
                      "(${TORCH_CXX_FLAGS}) and the system's libraries use the C++11 ABI")
endif()
