# AddressSanitizer + UBSan builds of chosen targets, for the fuzz tests (tests/CMakeLists.txt).
#   llmbench_sanitize_target(T)                     compile and link T with the sanitizers
#   llmbench_sanitized_copy(LIB [DEPS dep...])      LIB_asan: LIB's own sources, sanitized,
#                                                   linking DEPS instead of LIB's dependencies
# A copy reads LIB's SOURCES and include scope, so adding a file to a library adds it to its
# sanitized copy too; nothing lists sources by hand.
set(LLMBENCH_SANITIZE_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
                            -fno-sanitize-recover=all)
# Sanitized code is compiled at -O1 with line tables only (-g1): enough for the sanitizers' stack
# traces with file and line, and about 2.5x quicker to compile than the Release -O3 -g it replaced
# (run_options.cpp: 59 s -> 23 s on 2 cores), which kept CI's build over its time budget.
set(LLMBENCH_SANITIZE_COMPILE_FLAGS ${LLMBENCH_SANITIZE_FLAGS} -O1 -g1)

function(llmbench_sanitize_target target)
  target_compile_options(${target} PRIVATE ${LLMBENCH_SANITIZE_COMPILE_FLAGS})
  target_link_options(${target} PRIVATE ${LLMBENCH_SANITIZE_FLAGS})
endfunction()

function(llmbench_sanitized_copy lib)
  cmake_parse_arguments(S "" "" "DEPS" ${ARGN})
  get_target_property(sources ${lib} SOURCES)
  get_target_property(dir ${lib} SOURCE_DIR)
  list(TRANSFORM sources PREPEND "${dir}/" REGEX "^[^/$]")
  add_library(${lib}_asan STATIC ${sources})
  target_include_directories(${lib}_asan PUBLIC
                             $<TARGET_PROPERTY:${lib},INTERFACE_INCLUDE_DIRECTORIES>)
  target_link_libraries(${lib}_asan PUBLIC ${S_DEPS})
  target_compile_options(${lib}_asan PRIVATE ${LLMBENCH_SANITIZE_COMPILE_FLAGS})
  # Compiled as a unity build, 8 sources to a translation unit (the six copies: 520 CPU-s of
  # compile -> 277 on this 2-core VM, 2026-11-28): the copy is only ever a fuzz target's library,
  # and its fuzz tests pass on it.
  set_target_properties(${lib}_asan PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  target_link_options(${lib}_asan INTERFACE ${LLMBENCH_SANITIZE_FLAGS})
endfunction()
