# The layering check behind ctest `layering_includes` (cmake -P): scans every #include "..." in
# kernels/, engine/ and tools/ and fails on one that runs against the library graph below, or
# that climbs out of its folder with "../". The build enforces the same graph through each
# library's include scope (cmake/layering.cmake); this scan also names every offender at once
# and catches relative paths, which include scope cannot see.
#
cmake_minimum_required(VERSION 3.25)

# Folder -> the folders its files may include (besides its own).
set(allowed_kernels/common "")
set(allowed_kernels/cpu "kernels/common")
set(allowed_kernels/cuda "kernels/common")
set(allowed_engine "kernels/common;kernels/cpu;kernels/cuda")
set(engine_deps "engine;kernels/common;kernels/cpu;kernels/cuda")
set(allowed_tools/build_info "")
set(allowed_tools/store "${engine_deps};tools/build_info")
set(allowed_tools/query "${allowed_tools/store};tools/store")
set(allowed_tools/compare "${allowed_tools/query};tools/query")
set(allowed_tools/trace_io "${allowed_tools/compare};tools/compare")
set(allowed_tools/report "${allowed_tools/compare};tools/compare")
set(allowed_tools/run "${allowed_tools/report};tools/report")
set(allowed_tools/serve "${allowed_tools/run};tools/run")
set(allowed_tools/load "${allowed_tools/run};tools/run")
set(allowed_tools/cli "${allowed_tools/run};tools/run;tools/trace_io;tools/serve;tools/load")

file(GLOB_RECURSE files RELATIVE ${ROOT}
     ${ROOT}/kernels/*.h ${ROOT}/kernels/*.cpp ${ROOT}/kernels/*.cu ${ROOT}/kernels/*.cuh
     ${ROOT}/engine/*.h ${ROOT}/engine/*.cpp
     ${ROOT}/tools/*.h ${ROOT}/tools/*.cpp ${ROOT}/tools/*.in)
set(bad "")
set(checked 0)
foreach(f IN LISTS files)
  get_filename_component(folder ${f} DIRECTORY)
  if(NOT DEFINED allowed_${folder})
    list(APPEND bad "${f}: folder '${folder}' is not in the layering graph (tests/layering)")
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
      list(APPEND bad "${f}: includes \"${inc}\" (${folder} may include: ${allowed_${folder}})")
    endif()
  endforeach()
endforeach()
list(LENGTH files n_files)
if(bad)
  list(JOIN bad "\n  " text)
  message(FATAL_ERROR "includes against the layering:\n  ${text}")
endif()
message(STATUS "layering: ${checked} includes in ${n_files} files follow the library graph")
