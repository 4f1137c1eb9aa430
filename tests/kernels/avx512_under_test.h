// Which copy of the AVX-512 kernels a kernel test calls, and whether it can run here. The same
// test source is compiled into test_kernels, where LLMBENCH_AVX512_NS:: names the real kernels
// (run where cpu_isa() found AVX-512, skipped elsewhere), and into test_avx512_emulated, where it
// names the SIMDe copy (kernels/cpu/avx512_intrinsics.h), which runs on every CPU.
#pragma once

#include "kernels/cpu/avx512_namespace.h"
#include "kernels/cpu/cpu_isa.h"

namespace llmbench::test {

// True where the AVX-512 kernels this binary links can run: always for the emulated copy.
inline bool avx512_kernels_run() {
#if defined(LLMBENCH_AVX512_EMULATED)
  return true;
#else
  return cpu::cpu_isa().avx512;
#endif
}

// "avx512" or "avx512 (emulated)", for messages.
inline const char* avx512_kernels_name() {
#if defined(LLMBENCH_AVX512_EMULATED)
  return "avx512 (emulated)";
#else
  return "avx512";
#endif
}

}  // namespace llmbench::test
