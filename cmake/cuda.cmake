# Decides LLMBENCH_HAVE_CUDA and LLMBENCH_HAVE_NVTX.
#   LLMBENCH_CUDA=OFF  : never build CUDA code.
#   LLMBENCH_CUDA=AUTO : build it when nvcc and the CUDA toolkit are found (/usr/local/cuda too).
#   LLMBENCH_CUDA=ON   : the same, but a missing toolkit is a configure error.
# NVTX3 is header-only; it is compiled in whenever its headers are found, with or without CUDA.
set(LLMBENCH_HAVE_CUDA OFF)
set(LLMBENCH_HAVE_NVTX OFF)

if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
list(APPEND CMAKE_PREFIX_PATH /usr/local/cuda)

if(NOT LLMBENCH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  find_package(CUDAToolkit QUIET)
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80;90")
    endif()
    # One (shared) CUDA runtime per process, for every target.
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    enable_language(CUDA)
    set(LLMBENCH_HAVE_CUDA ON)
    message(STATUS "llmbench: CUDA ${CUDAToolkit_VERSION} found; archs ${CMAKE_CUDA_ARCHITECTURES}")
  elseif(LLMBENCH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "LLMBENCH_CUDA=ON but no CUDA toolkit/nvcc was found")
  else()
    message(STATUS "llmbench: no CUDA toolkit found; building the CPU backend only")
  endif()
endif()

find_path(LLMBENCH_NVTX3_INCLUDE nvtx3/nvToolsExt.h
          HINTS /usr/local/cuda/include ${CUDAToolkit_INCLUDE_DIRS})
if(LLMBENCH_NVTX3_INCLUDE)
  set(LLMBENCH_HAVE_NVTX ON)
  add_library(llmbench_nvtx INTERFACE)
  target_include_directories(llmbench_nvtx SYSTEM INTERFACE ${LLMBENCH_NVTX3_INCLUDE})
  target_compile_definitions(llmbench_nvtx INTERFACE LLMBENCH_HAVE_NVTX=1)
  # NVTX3 dlopen()s the injection library at run time.
  target_link_libraries(llmbench_nvtx INTERFACE ${CMAKE_DL_LIBS})
  message(STATUS "llmbench: NVTX3 headers at ${LLMBENCH_NVTX3_INCLUDE}")
endif()
