# find_package(Torch) for Partita: torch's own TorchConfig.cmake (or, for a CUDA torch on a
# machine without a CUDA toolkit, an imported target made from torch's folders), then the headers
# torch ships that shadow system libraries we link are hidden (partita_torch_headers.cmake).
# cmake/partita_torch.cmake puts this folder on CMAKE_MODULE_PATH and finds torch once in
# the top-level directory; the find_package(Torch) calls in the layers' directories, which
# see those imported targets already, return here at once with the same variables.
#
# Sets what TorchConfig.cmake sets: Torch_FOUND, TORCH_LIBRARIES, TORCH_INCLUDE_DIRS,
# TORCH_CXX_FLAGS, TORCH_INSTALL_PREFIX, and the imported target `torch`.
#
# Why DIRECT exists: for a torch built with CUDA, torch 2.x's Caffe2Config.cmake includes
# its public/cuda.cmake, which calls find_package(CUDAToolkit) and enable_language(CUDA)
# and, without a toolkit, stops with "Your installed Caffe2 version uses CUDA but I cannot
# find the CUDA libraries" (pytorch/pytorch cmake/Caffe2Config.cmake.in; older versions
# call find_package(CUDA) there instead). No variable skips that. Partita compiles no CUDA
# code (the device kernels are torch ops), so it needs only torch's headers and libraries.
if(TARGET torch AND DEFINED TORCH_LIBRARIES AND DEFINED TORCH_INCLUDE_DIRS)
  # Found in a parent directory: its imported targets and variables are visible here.
  set(Torch_FOUND TRUE)
  set(TORCH_FOUND TRUE)
  return()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/partita_torch_headers.cmake)
if(NOT DEFINED PARTITA_TORCH_HIDDEN_HEADERS)
  set(PARTITA_TORCH_HIDDEN_HEADERS fmt spdlog nlohmann)
endif()

set(_partita_import "${PARTITA_TORCH_IMPORT}")
if(NOT _partita_import OR _partita_import STREQUAL "AUTO")
  set(_partita_import CONFIG)
  if(Torch_DIR AND EXISTS "${Torch_DIR}/../../../lib/libtorch_cuda.so")
    # A CUDA torch: its config needs the CUDA toolkit and nvcc. -DCMAKE_CUDA_COMPILER picks
    # the compiler (or names a missing file, to act as if there were none); else the
    # toolkit is looked for as torch's config does, and its nvcc handed to it.
    if(NOT DEFINED CMAKE_CUDA_COMPILER)
      find_package(CUDAToolkit QUIET)
      if(CUDAToolkit_FOUND AND EXISTS "${CUDAToolkit_NVCC_EXECUTABLE}")
        set(CMAKE_CUDA_COMPILER "${CUDAToolkit_NVCC_EXECUTABLE}" CACHE FILEPATH
            "The CUDA compiler that torch's CMake files enable")
      endif()
    endif()
    if(NOT CMAKE_CUDA_COMPILER OR NOT EXISTS "${CMAKE_CUDA_COMPILER}")
      set(_partita_import DIRECT)
      message(STATUS "partita: torch has CUDA but no CUDA toolkit was found: importing its "
                     "libraries directly (PARTITA_TORCH_IMPORT=DIRECT)")
    endif()
  endif()
endif()

if(_partita_import STREQUAL "DIRECT")
  if(NOT Torch_DIR OR NOT EXISTS "${Torch_DIR}/TorchConfig.cmake")
    message(FATAL_ERROR "PARTITA_TORCH_IMPORT=DIRECT needs torch's CMake dir: set PARTITA_PYTHON "
                        "or Torch_DIR (now '${Torch_DIR}')")
  endif()
  # <prefix>/share/cmake/Torch, as TorchConfig.cmake itself assumes.
  get_filename_component(TORCH_INSTALL_PREFIX "${Torch_DIR}/../../.." ABSOLUTE)
  set(TORCH_INCLUDE_DIRS "${TORCH_INSTALL_PREFIX}/include"
                         "${TORCH_INSTALL_PREFIX}/include/torch/csrc/api/include")
  foreach(_partita_lib torch torch_cpu c10 torch_cuda c10_cuda)
    find_library(PARTITA_TORCH_LIBRARY_${_partita_lib} ${_partita_lib}
                 HINTS "${TORCH_INSTALL_PREFIX}/lib")
    mark_as_advanced(PARTITA_TORCH_LIBRARY_${_partita_lib})
  endforeach()
  # The ABI: what the interpreter reported (cmake/partita_torch.cmake), else the flag
  # written into TorchConfig.cmake, else the compiler's default.
  if(NOT DEFINED PARTITA_TORCH_CXX11_ABI)
    file(STRINGS "${Torch_DIR}/TorchConfig.cmake" _partita_abi REGEX "_GLIBCXX_USE_CXX11_ABI=[01]")
    if(_partita_abi MATCHES "_GLIBCXX_USE_CXX11_ABI=([01])")
      set(PARTITA_TORCH_CXX11_ABI ${CMAKE_MATCH_1})
    endif()
  endif()
  set(TORCH_CXX_FLAGS "")
  if(DEFINED PARTITA_TORCH_CXX11_ABI)
    set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=${PARTITA_TORCH_CXX11_ABI}")
  endif()
  set(TORCH_LIBRARY "${PARTITA_TORCH_LIBRARY_torch}")
  include(FindPackageHandleStandardArgs)
  find_package_handle_standard_args(Torch REQUIRED_VARS TORCH_LIBRARY PARTITA_TORCH_LIBRARY_torch_cpu
                                    PARTITA_TORCH_LIBRARY_c10 TORCH_INSTALL_PREFIX)
  if(Torch_FOUND AND NOT TARGET torch)
    set(_partita_links "${PARTITA_TORCH_LIBRARY_torch}" "${PARTITA_TORCH_LIBRARY_torch_cpu}"
                       "${PARTITA_TORCH_LIBRARY_c10}")
    if(PARTITA_TORCH_LIBRARY_torch_cuda)
      # Nothing of ours calls into libtorch_cuda, but loading it is what registers torch's
      # CUDA kernels: keep it even under --as-needed (Ubuntu's default), as torch does.
      set(_partita_cuda "${PARTITA_TORCH_LIBRARY_torch_cuda}")
      if(PARTITA_TORCH_LIBRARY_c10_cuda)
        string(APPEND _partita_cuda ",${PARTITA_TORCH_LIBRARY_c10_cuda}")
      endif()
      list(APPEND _partita_links "-Wl,--push-state,--no-as-needed,${_partita_cuda},--pop-state")
    endif()
    add_library(torch INTERFACE IMPORTED)
    set_target_properties(torch PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIRS}"
      INTERFACE_LINK_LIBRARIES "${_partita_links}")
    if(TORCH_CXX_FLAGS)
      set_property(TARGET torch PROPERTY INTERFACE_COMPILE_OPTIONS "${TORCH_CXX_FLAGS}")
    endif()
  endif()
  set(TORCH_LIBRARIES torch)
  set(TORCH_FOUND ${Torch_FOUND})
else()
  set(_partita_args CONFIG)
  if(Torch_FIND_QUIETLY)
    list(APPEND _partita_args QUIET)
  endif()
  if(Torch_FIND_REQUIRED)
    list(APPEND _partita_args REQUIRED)
  endif()
  find_package(Torch ${_partita_args})
endif()

if(Torch_FOUND AND PARTITA_TORCH_HIDDEN_HEADERS)
  partita_torch_hide_headers(INCLUDE_DIRS_VAR TORCH_INCLUDE_DIRS
                             TARGETS torch ${TORCH_LIBRARIES}
                             NAMES ${PARTITA_TORCH_HIDDEN_HEADERS}
                             WORK_DIR "${CMAKE_BINARY_DIR}/torch-include")
  if(PARTITA_TORCH_HIDDEN)
    string(REPLACE ";" ", " _partita_hidden "${PARTITA_TORCH_HIDDEN}")
    message(STATUS "partita: hidden from torch's include path (the system's copies are "
                   "used): ${_partita_hidden}")
  endif()
endif()
