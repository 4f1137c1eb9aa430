// Which hand-written instruction-set path the CPU kernels take, decided once per process:
// the CPU's own features (CPUID) and, to force a fallback, the environment variable
// LLMBENCH_CPU_ISA = auto (default) | avx512 | portable.
//   avx512    the kernels in *_avx512.cpp (AVX-512 F/BW/VL + F16C + FMA; the bf16 ones also
//             need AVX512_BF16 for vdpbf16ps, the int8-activation quantised kernel AVX512_VNNI
//             for vpdpbusd). Compiled with per-file flags, run only here.
//   avx2      where the avx512 path is not taken: the *_avx2.cpp kernels (AVX2 + FMA + F16C),
//             used whenever the CPU has those (a VM may expose AVX2 without AVX-512 on the same
//             Zen 4 host): matmul_avx2.cpp for fp32, bf16 and fp16 weights at decode's 1-8 rows
//             (matmul() and matmul_half()), quant_avx2.cpp for int8/int4 weights at every row
//             count, swiglu_avx2.cpp and argmax_avx2.cpp.
//   portable  the compiler-vectorised kernels (GCC target_clones: AVX-512, AVX2 or baseline
//             code picked by the loader) and OpenBLAS: what runs on any x86-64 CPU.
// Asking for avx512 on a CPU without it gives portable. Deliberately not: per-call switching or
// a registry of kernels; tests set the variable before the first kernel call.
#pragma once

namespace llmbench::cpu {

struct CpuIsa {
  bool avx512 = false;       // AVX-512 F/BW/VL/DQ, F16C and FMA present and not disabled
  bool avx512_bf16 = false;  // and AVX512_BF16 (vdpbf16ps)
  bool avx512_vnni = false;  // and AVX512_VNNI (vpdpbusd)
  bool avx2 = false;         // AVX2, FMA and F16C present and not disabled (portable: off)
};

// The path this process uses (computed on first call, then fixed).
const CpuIsa& cpu_isa();

// "avx512-bf16", "avx512", "avx2" or "portable": for logs and device descriptions.
const char* cpu_isa_name();

}  // namespace llmbench::cpu
