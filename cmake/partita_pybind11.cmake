# What the Python extension module (python/CMakeLists.txt) is built with: the development
# files of the interpreter whose torch we link, and pybind11's CMake package in its FindPython
# mode, found so that pybind11_add_module works whatever found Python before (issue 37).
#
# Input:  PARTITA_PYTHON_EXECUTABLE (cmake/partita_torch.cmake), the interpreter whose torch
#         the layers link; the module is built for it.
# Sets:   PARTITA_PYBIND11_MISSING  empty when pybind11_add_module can be called here; else
#                                   why not, as a phrase for the "skipped" status line.
#         what find_package(Python) and find_package(pybind11) set, in the including scope.
#
# Why Python is found here first: pybind11's FindPython mode (pybind11NewTools.cmake, the
# same logic in 2.10 as in 2.13 and 3.x) searches for Python itself only when nothing found
# it before (`if(NOT Python_FOUND AND NOT Python3_FOUND)`); otherwise it takes what was
# found and its pybind11_add_module calls python_add_library (python3_add_library), which
# CMake's FindPython defines only once its Development or Development.Module component was
# found. Torch 2.x's CMake config finds Python with the interpreter alone, so after it
# pybind11 stopped at `Unknown CMake command "python_add_library"`. Found here with
# Development.Module, for our interpreter, Python is what pybind11 takes (Python before
# Python3), whichever of its versions it is, and whatever was found before.
include_guard(DIRECTORY)

set(PARTITA_PYBIND11_MISSING "")
# The module is for the interpreter whose torch we link, not for one found before us (torch's
# config may have taken another python3 on PATH). Python_EXECUTABLE, as a variable, is the
# interpreter FindPython uses.
if(PARTITA_PYTHON_EXECUTABLE)
  if(DEFINED Python_EXECUTABLE)
    get_filename_component(_partita_had "${Python_EXECUTABLE}" REALPATH)
    get_filename_component(_partita_want "${PARTITA_PYTHON_EXECUTABLE}" REALPATH)
    if(NOT _partita_had STREQUAL _partita_want)
      message(STATUS "partita: the Python extension is built for ${PARTITA_PYTHON_EXECUTABLE} "
                     "(whose torch is linked), not ${Python_EXECUTABLE} found before")
    endif()
  endif()
  set(Python_EXECUTABLE "${PARTITA_PYTHON_EXECUTABLE}")
endif()
find_package(Python 3.8 COMPONENTS Interpreter Development.Module)
if(NOT Python_Development.Module_FOUND)
  set(PARTITA_PYBIND11_MISSING
      "no development headers of ${Python_EXECUTABLE} (Python.h: python3-dev on Debian)")
  return()
endif()

# pybind11's CMake package: the interpreter's own (pip's pybind11) when it has one, else the
# system's (pybind11-dev). FindPython mode: pybind11 uses the Python found above.
set(PYBIND11_FINDPYTHON ON)
execute_process(COMMAND "${Python_EXECUTABLE}" -c "import pybind11; print(pybind11.get_cmake_dir())"
                OUTPUT_VARIABLE PARTITA_PYBIND11_HINT ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
find_package(pybind11 2.6 CONFIG QUIET HINTS ${PARTITA_PYBIND11_HINT})
if(NOT pybind11_FOUND)
  set(PARTITA_PYBIND11_MISSING "no pybind11 CMake package (pybind11-dev, or pip's pybind11)")
elseif(NOT COMMAND python_add_library)
  # Not expected after the above; said here rather than as CMake's unknown command.
  set(PARTITA_PYBIND11_MISSING
      "pybind11 ${pybind11_VERSION} is not in its FindPython mode (python_add_library missing)")
endif()
