# partita_torch_hide_headers(INCLUDE_DIRS_VAR <var> TARGETS <target>... NAMES <name>...
#                            WORK_DIR <dir>)
#
# Why: pip's torch 2.x ships third-party headers in its include dir (torch/include/fmt is
# fmt 12), and that dir comes first on every compile line of a target linking torch, so
# `#include <fmt/core.h>` there finds torch's fmt instead of the system's fmt 9, whose
# library we link: the link then fails on fmt::v12 symbols (issue 24).
#
# What it does: for every directory D in ${<var>} that holds one of NAMES (an entry of D,
# file or folder, such as `fmt`) and is not one of the compiler's own include dirs (there
# the entry IS the system's copy), it makes <WORK_DIR>/<hash of D>: a folder of symbolic
# links to every entry of D except NAMES, and puts that folder in D's place
#  - in ${<var>} (in the caller's scope), and
#  - in INTERFACE_INCLUDE_DIRECTORIES and INTERFACE_SYSTEM_INCLUDE_DIRECTORIES of the
#    imported TARGETS and of every imported target they reach through
#    INTERFACE_LINK_LIBRARIES (torch -> torch_library -> torch_cpu -> c10 ...).
# Nothing in D is touched. Headers reached through the links keep working: their relative
# includes resolve inside D, because a link to a folder is a path into D itself. Runs at
# configure time; links already there are kept, so an unchanged D rebuilds nothing.
# Sets PARTITA_TORCH_HIDDEN (caller's scope): "<D>/<name>" for each entry hidden.
function(partita_torch_hide_headers)
  cmake_parse_arguments(ARG "" "INCLUDE_DIRS_VAR;WORK_DIR" "TARGETS;NAMES" ${ARGN})
  if(NOT ARG_INCLUDE_DIRS_VAR OR NOT ARG_WORK_DIR)
    message(FATAL_ERROR "partita_torch_hide_headers: INCLUDE_DIRS_VAR and WORK_DIR are required")
  endif()
  set(hidden "")
  set(dirs "${${ARG_INCLUDE_DIRS_VAR}}")
  set(implicit "")
  foreach(dir IN LISTS CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES)
    file(REAL_PATH "${dir}" real)
    list(APPEND implicit "${real}")
  endforeach()

  # D -> its replacement, as two parallel lists of real paths and replacements.
  set(from "")
  set(to "")
  foreach(dir IN LISTS dirs)
    if(NOT IS_DIRECTORY "${dir}")
      continue()
    endif()
    file(REAL_PATH "${dir}" real)
    if(real IN_LIST implicit OR real IN_LIST from)
      continue()
    endif()
    set(clashes "")
    foreach(name IN LISTS ARG_NAMES)
      if(EXISTS "${real}/${name}")
        list(APPEND clashes "${name}")
      endif()
    endforeach()
    if(NOT clashes)
      continue()
    endif()
    string(SHA1 key "${real}")
    string(SUBSTRING "${key}" 0 12 key)
    set(mirror "${ARG_WORK_DIR}/${key}")
    file(GLOB entries LIST_DIRECTORIES true RELATIVE "${real}" "${real}/*")
    list(REMOVE_ITEM entries ${clashes})
    # Drop links of entries that went away (or are now hidden), then add the missing ones.
    file(MAKE_DIRECTORY "${mirror}")
    file(GLOB present LIST_DIRECTORIES true RELATIVE "${mirror}" "${mirror}/*")
    foreach(entry IN LISTS present)
      if(NOT entry IN_LIST entries)
        file(REMOVE "${mirror}/${entry}")
      endif()
    endforeach()
    foreach(entry IN LISTS entries)
      if(NOT IS_SYMLINK "${mirror}/${entry}")
        file(CREATE_LINK "${real}/${entry}" "${mirror}/${entry}" SYMBOLIC)
      endif()
    endforeach()
    file(WRITE "${mirror}.txt" "Links to the entries of ${real} except: ${clashes}\n"
               "(partita_torch_hide_headers, cmake/partita_torch_headers.cmake)\n")
    list(APPEND from "${real}")
    list(APPEND to "${mirror}")
    foreach(name IN LISTS clashes)
      list(APPEND hidden "${real}/${name}")
    endforeach()
  endforeach()
  set(PARTITA_TORCH_HIDDEN "${hidden}" PARENT_SCOPE)
  if(NOT from)
    return()
  endif()

  # The variable.
  set(new_dirs "")
  foreach(dir IN LISTS dirs)
    _partita_substitute_dir("${dir}" out)
    list(APPEND new_dirs "${out}")
  endforeach()
  set(${ARG_INCLUDE_DIRS_VAR} "${new_dirs}" PARENT_SCOPE)

  # The imported targets, walked through their link interfaces, and every imported target
  # of this directory (CMake 3.21+) for good measure.
  set(queue ${ARG_TARGETS})
  if(NOT CMAKE_VERSION VERSION_LESS 3.21)
    get_directory_property(directory_targets IMPORTED_TARGETS)
    list(APPEND queue ${directory_targets})
  endif()
  set(seen "")
  while(queue)
    list(POP_FRONT queue target)
    if(target IN_LIST seen OR NOT TARGET "${target}")
      continue()
    endif()
    list(APPEND seen "${target}")
    get_target_property(aliased "${target}" ALIASED_TARGET)
    if(aliased)
      list(APPEND queue "${aliased}")
      continue()
    endif()
    get_target_property(imported "${target}" IMPORTED)
    if(NOT imported)
      continue()
    endif()
    foreach(property INTERFACE_INCLUDE_DIRECTORIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES)
      get_target_property(values "${target}" ${property})
      if(NOT values)
        continue()
      endif()
      set(new_values "")
      foreach(value IN LISTS values)
        _partita_substitute_dir("${value}" out)
        list(APPEND new_values "${out}")
        _partita_targets_named("${value}" named)
        list(APPEND queue ${named})
      endforeach()
      set_property(TARGET "${target}" PROPERTY ${property} "${new_values}")
    endforeach()
    get_target_property(links "${target}" INTERFACE_LINK_LIBRARIES)
    if(links)
      foreach(link IN LISTS links)
        _partita_targets_named("${link}" named)
        list(APPEND queue ${named})
      endforeach()
    endif()
  endwhile()
endfunction()

# out = the replacement of dir when dir is (the real path of) one of `from`, else dir.
# Reads `from` and `to` from the calling function's scope.
function(_partita_substitute_dir dir out)
  set(result "${dir}")
  if(IS_ABSOLUTE "${dir}" AND IS_DIRECTORY "${dir}")
    file(REAL_PATH "${dir}" real)
    list(FIND from "${real}" index)
    if(index GREATER -1)
      list(GET to ${index} result)
    endif()
  endif()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# out = the targets that `item` (one entry of a link or include property) names: the item
# itself, or the targets inside its generator expressions. Torch's own targets reach each
# other that way: torch_cpu_library's include dirs are
# "$<TARGET_PROPERTY:torch_cpu,INTERFACE_INCLUDE_DIRECTORIES>", its links
# "-Wl,--no-as-needed,"$<TARGET_FILE:torch_cpu>" ...;$<TARGET_PROPERTY:torch_cpu,...>".
function(_partita_targets_named item out)
  set(names "")
  if(TARGET "${item}")
    list(APPEND names "${item}")
  endif()
  string(REGEX MATCHALL "\\$<[A-Z_]+:[^,>$\"]+" refs "${item}")
  foreach(ref IN LISTS refs)
    string(REGEX REPLACE "^\\$<[A-Z_]+:" "" name "${ref}")
    if(TARGET "${name}")
      list(APPEND names "${name}")
    endif()
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()
