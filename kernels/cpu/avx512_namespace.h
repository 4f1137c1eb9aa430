// The namespace the AVX-512 kernels (kernels/cpu/*_avx512.cpp and their headers) are defined
// in: llmbench::cpu::avx512 in the library, llmbench::cpu::avx512_emulated in the copy that the
// tests compile a second time with SIMDe instead of the CPU's instructions (LLMBENCH_AVX512_EMULATED,
// tests/CMakeLists.txt). Two names, so both copies can live in one test binary without
// colliding. Deliberately not: a namespace per kernel, or a switch the library itself reads.
#pragma once

#if defined(LLMBENCH_AVX512_EMULATED)
#define LLMBENCH_AVX512_NS avx512_emulated
#else
#define LLMBENCH_AVX512_NS avx512
#endif
