# The layering check behind ctest `layering_includes` (cmake -P): scans every #include "..." in
# kernels/, engine/ and tools/ and fails on one that runs against the library graph, or that
# climbs out of its folder with "../". The graph is not a copy: GRAPH is the file CMake writes
# from the libraries' own link declarations (llmbench_write_layering_graph,
# cmake/layering.cmake), the same graph the build enforces through each library's include
# scope. This scan names every offender at once and catches relative paths, which include
# scope cannot see.
#   cmake -DROOT=<source tree> -DGRAPH=<build>/layering_graph.cmake -P check_includes.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT EXISTS "${GRAPH}")
  message(FATAL_ERROR "layering: no library graph at '${GRAPH}' (configure the build first)")
endif()
include(${GRAPH})  # sets layering_folders and allowed_<folder> for each of them

file(GLOB_RECURSE files RELATIVE ${ROOT}
     ${ROOT}/kernels/*.h ${ROOT}/kernels/*.cpp ${ROOT}/kernels/*.cu ${ROOT}/kernels/*.cuh
     ${ROOT}/engine/*.h ${ROOT}/engine/*.cpp
     ${ROOT}/tools/*.h ${ROOT}/tools/*.cpp ${ROOT}/tools/*.in)
set(bad "")
set(checked 0)
foreach(f IN LISTS files)
  get_filename_component(folder ${f} DIRECTORY)
  if(NOT folder IN_LIST layering_folders)
    list(APPEND bad "${f}: folder '${folder}' is no library's include root (cmake/layering.cmake)")
    continue()
  endif()
  file(STRINGS ${ROOT}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" inc "${line}")
    math(EXPR checked "${checked} + 1")
    if(inc MATCHES "\\.\\./")
      list(APPEND bad "${f}: includes \"${inc}\" (relative paths climb around the layering)")
      continue()
    endif()
    get_filename_component(target_folder ${inc} DIRECTORY)
    if(target_folder STREQUAL "" OR target_folder STREQUAL folder)
      continue()
    endif()
    if(NOT target_folder IN_LIST allowed_${folder})
      string(REPLACE ";" ", " may "${allowed_${folder}}")
      list(APPEND bad "${f}: includes \"${inc}\" (${folder} may include: ${may})")
    endif()
  endforeach()
endforeach()
list(LENGTH files n_files)
if(bad)
  list(JOIN bad "\n  " text)
  message(FATAL_ERROR "includes against the layering:\n  ${text}")
endif()
message(STATUS "layering: ${checked} includes in ${n_files} files follow the library graph")
