// The AVX-512 intrinsics the *_avx512.cpp kernels are written in. In the library: the CPU's own
// (<immintrin.h>; those files alone get the -mavx512* flags). In the tests' emulated copy
// (LLMBENCH_AVX512_EMULATED, tests/CMakeLists.txt): the same names from SIMDe, portable C++
// that runs on any x86-64 CPU, plus avx512_simde_gaps.h for the few SIMDe 0.7.4 (Debian 12)
// lacks. So the kernels' correctness tests run on a CPU without AVX-512 too; their speed does not
// carry over (nothing here is timed).
// Where SIMDe's arithmetic differs from the hardware's, avx512_simde_gaps.h and
// tests/kernels/test_avx512_emulated.cpp say so (vdpbf16ps, vcvtps2ph of NaN).
#pragma once

#include "kernels/cpu/avx512_namespace.h"

#if defined(LLMBENCH_AVX512_EMULATED)
// vfmadd*ps rounds once. SIMDe's portable fmadd uses fmaf only where <math.h> says fmaf is fast
// (FP_FAST_FMAF, defined only under -mfma); otherwise it computes a * b + c with two roundings,
// and every kernel's bits would differ from the hardware's. glibc's fmaf rounds once on every
// CPU (in software where there is no FMA unit), so it is declared fast here: the emulated FMAs
// round as the instruction does.
#if !defined(FP_FAST_FMAF)
#define FP_FAST_FMAF 1
#endif
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#include <simde/x86/f16c.h>
#include <simde/x86/fma.h>

#include "kernels/cpu/avx512_simde_gaps.h"
#else
#include <immintrin.h>
#endif
