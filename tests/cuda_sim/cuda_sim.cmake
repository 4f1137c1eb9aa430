# cuda_sim (tests/cuda_sim/cuda_sim.h): kernels/cuda's kernels compiled as C++ and run on the CPU,
# tested against the CPU references by test_cuda_sim_asan. Needs neither nvcc nor a GPU, so it
# builds and runs everywhere the suite does. Each .cu / .cuh is first rewritten by translate_cu.py
# (launches and __shared__ declarations) into the build tree, whose copy of kernels/cuda is found
# before the source tree's. cuBLAS's entry points are cuda_sim's (cuda_sim_runtime.h), so
# cublas_loader.cpp, which finds the real library at run time, is left out.
find_program(LLMBENCH_SIM_PYTHON python3 REQUIRED)
set(_sim_src ${CMAKE_CURRENT_BINARY_DIR}/cuda_sim/src)
file(GLOB _sim_cuda_sources RELATIVE ${PROJECT_SOURCE_DIR}
     ${PROJECT_SOURCE_DIR}/kernels/cuda/*.cu ${PROJECT_SOURCE_DIR}/kernels/cuda/*.cuh
     ${PROJECT_SOURCE_DIR}/kernels/cuda/*.h)
list(REMOVE_ITEM _sim_cuda_sources kernels/cuda/cublas_loader.h)
set(_sim_translated "")
set(_sim_compiled "")
foreach(rel IN LISTS _sim_cuda_sources)
  set(out ${_sim_src}/${rel})
  if(rel MATCHES "\\.cu$")
    set(out ${out}.cpp)
    list(APPEND _sim_compiled ${out})
  endif()
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_sim_src}/kernels/cuda
    COMMAND ${LLMBENCH_SIM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/cuda_sim/translate_cu.py
            ${PROJECT_SOURCE_DIR}/${rel} ${out} ${rel}
    DEPENDS ${PROJECT_SOURCE_DIR}/${rel} ${CMAKE_CURRENT_SOURCE_DIR}/cuda_sim/translate_cu.py
    COMMENT "cuda_sim: translating ${rel}" VERBATIM)
  list(APPEND _sim_translated ${out})
endforeach()

# The scheduler itself is not instrumented (a fiber switch costs 100 ns instead of 150 ns under
# AddressSanitizer, and the kernel tests wait millions of times); it still tells
# AddressSanitizer about every switch of stacks.
add_library(llmbench_cuda_sim_scheduler STATIC cuda_sim/cuda_sim.cpp)
target_include_directories(llmbench_cuda_sim_scheduler BEFORE PRIVATE ${_sim_src}
                           ${CMAKE_CURRENT_SOURCE_DIR}/cuda_sim/include)
target_link_libraries(llmbench_cuda_sim_scheduler PRIVATE llmbench_common llmbench_test_support)
target_compile_definitions(llmbench_cuda_sim_scheduler PRIVATE CUDA_SIM_ANNOTATE_ASAN=1)
add_library(llmbench_cuda_sim STATIC
  ${_sim_compiled}
  cuda_sim/cuda_sim_runtime.cpp)
target_link_libraries(llmbench_cuda_sim PUBLIC llmbench_cuda_sim_scheduler)
# The headers that are not compiled still have to exist before anything includes them.
add_custom_target(llmbench_cuda_sim_sources DEPENDS ${_sim_translated})
add_dependencies(llmbench_cuda_sim llmbench_cuda_sim_sources)
# Translated kernels first, then the stand-in CUDA headers; no CUDA toolkit on the path.
target_include_directories(llmbench_cuda_sim BEFORE PUBLIC ${_sim_src}
                           ${CMAKE_CURRENT_SOURCE_DIR}/cuda_sim/include)
target_link_libraries(llmbench_cuda_sim PUBLIC llmbench_common llmbench_test_support)
target_compile_options(llmbench_cuda_sim PRIVATE -Wno-unknown-pragmas)
llmbench_sanitize_target(llmbench_cuda_sim)
target_link_options(llmbench_cuda_sim INTERFACE ${LLMBENCH_SANITIZE_FLAGS})

# The simulator's own tests, then the CUDA kernel tests of tests/cuda, unchanged: on the simulated
# device they run instead of skipping. Left out of ctest (FILTER), to keep the suite's time: the
# tiled kernel's 733-token prefill (66 s here; passed on an H100 and an H200,
# docs/gpu-validation.md) and the graph-sized attention over 42 shapes up to 16 x 4096 keys
# (250 s; OneCapturedLaunchReplays... runs the same kernels at five lengths). The cuBLAS GEMM and
# GEMV tests take 2-8 s each since the simulated cuBLAS widens its operands once per call.
# scripts/cuda_sim.sh runs every test of the binary.
llmbench_test(test_cuda_sim_asan TIMEOUT 600 PREFIX "cuda_sim." LINK llmbench_cuda_sim
              llmbench_kernels_cpu
              FILTER "-CudaKernels.AttentionPrefillOf733Tokens:CudaGraphKernels.AttentionAtMatchesTheCpuWithTheGridSizedForTheLongestContext"
              SOURCES
  cuda_sim/test_cuda_sim.cpp
  cuda/test_cuda_kernels.cpp
  cuda/test_cuda_variant_kernels.cpp
  cuda/test_cuda_ragged_kernels.cpp
  cuda/test_cuda_fused_kernels.cpp
  cuda/test_cuda_split_merge.cpp
  cuda/test_cuda_graph_kernels.cpp
)
llmbench_sanitize_target(test_cuda_sim_asan)
target_compile_options(test_cuda_sim_asan PRIVATE -Wno-unknown-pragmas)

# The model library again, its CUDA backend (cuda_backend*.cpp, cuda_graph_driver.cpp) built over
# the simulated device instead of CUDA's runtime and kernels/cuda's nvcc build: CudaBackend's ops,
# its graph capture and the fp16 KV cache run here end to end. Without CUPTI (as a toolkit without
# libcupti builds it) and without NVTX ranges.
get_target_property(_sim_model_sources llmbench_model SOURCES)
list(REMOVE_ITEM _sim_model_sources cuda_backend.cpp cuda_backend_kv_f16.cpp
     cuda_graph_driver.cpp cupti_timer.cpp)
list(APPEND _sim_model_sources cuda_backend.cpp cuda_backend_kv_f16.cpp cuda_graph_driver.cpp)
list(TRANSFORM _sim_model_sources PREPEND "${PROJECT_SOURCE_DIR}/engine/model/")
add_library(llmbench_model_sim STATIC ${_sim_model_sources})
# engine/model's include root alone (llmbench_model's interface would bring kernels/cuda's source
# folder and the CUDA toolkit's headers with it).
target_include_directories(llmbench_model_sim BEFORE PUBLIC ${_sim_src}
                           ${CMAKE_CURRENT_SOURCE_DIR}/cuda_sim/include
                           ${PROJECT_BINARY_DIR}/include_roots/engine_model)
target_link_libraries(llmbench_model_sim PUBLIC llmbench_cuda_sim llmbench_common
                      llmbench_kernels_cpu Threads::Threads OpenMP::OpenMP_CXX PkgConfig::OPENBLAS)
target_compile_definitions(llmbench_model_sim PUBLIC LLMBENCH_HAVE_CUDA=1)
llmbench_sanitize_target(llmbench_model_sim)

# The serving scheduler over it, and the synthetic prompts, for the forward-pass tests.
get_target_property(_sim_serving_sources llmbench_serving SOURCES)
list(TRANSFORM _sim_serving_sources PREPEND "${PROJECT_SOURCE_DIR}/engine/serving/")
add_library(llmbench_serving_sim STATIC ${_sim_serving_sources}
            ${PROJECT_SOURCE_DIR}/engine/bench/prompts.cpp)
target_include_directories(llmbench_serving_sim PUBLIC
                           ${PROJECT_BINARY_DIR}/include_roots/engine_serving
                           ${PROJECT_BINARY_DIR}/include_roots/engine_bench)
target_link_libraries(llmbench_serving_sim PUBLIC llmbench_model_sim)
llmbench_sanitize_target(llmbench_serving_sim)

# CudaBackend's tests, unchanged, on the simulated device: the fp16 KV cache's ops and kernels,
# and the forward pass against the CPU backend (graphs, fused ops, both attention kernels).
# ctest runs the fp16 cache's writes, widening and ragged pool, CudaSimForward (the fp16 and fp32
# caches' decode with graphs, fused ops and the streamed kernel; the kernels a decode step runs
# per layer) and the forward tests that take seconds (the `wide` model's bf16 and fp16 weights,
# 6-7 s each); not the fp16 attention tests over many shapes (35-60 s each here), and not the
# forward tests that loop over `wide`, batch 16 and every variant (1-10 minutes each here).
# scripts/cuda_sim.sh runs them all; docs/gpu-validation.md has the last full run.
set(_sim_model_filter
    "CudaSimForward.*:CudaKvF16*:CudaRaggedF16*:CudaForward.TinyMatchesCpu"
    ":CudaForward.TinyBf16MatchesCpuBf16"
    ":CudaForward.TinyFp16MatchesCpuFp16:CudaForward.Bf16IsCloseToCpuFp32"
    ":CudaForward.WideBf16MatchesCpuBf16:CudaForward.WideFp16MatchesCpuFp16"
    ":CudaForward.MatmulHalfAndEmbeddingHalfMatchTheCpuReference"
    ":CudaForward.BatchOfIdenticalPromptsEqualsBatchOne"
    ":CudaForward.GraphsAreNotUsedWithSyncCheckOrTracingAndSaySo"
    "-CudaKvF16Attention.*")
string(CONCAT _sim_model_filter ${_sim_model_filter})
llmbench_test(test_cuda_sim_model_asan TIMEOUT 600 PREFIX "cuda_sim." LINK llmbench_serving_sim
              FILTER "${_sim_model_filter}"
              SOURCES
  cuda/test_cuda_kv_f16.cpp
  cuda/test_cuda_kv_f16_attention.cpp
  cuda/test_cuda_ragged_f16.cpp
  cuda/test_cuda_forward.cpp
  cuda_sim/test_cuda_sim_forward.cpp
)
llmbench_sanitize_target(test_cuda_sim_model_asan)
