# partita_add_layer(NAME SOURCES ... DEPS ...)
# One static library per layer (partita::NAME), public headers under include/partita/NAME/.
# Layers link only downward, as in DESIGN.md.
function(partita_add_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(partita_${name} STATIC ${ARG_SOURCES})
  add_library(partita::${name} ALIAS partita_${name})
  target_include_directories(partita_${name} PUBLIC ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(partita_${name} PUBLIC ${ARG_DEPS})
endfunction()
