// Which hand-written instruction-set path the CPU kernels take, decided once per process:
// the CPU's own features (CPUID) and, to force one path, the environment variable
// LLMBENCH_CPU_ISA = auto (default) | avx512 | avx2 | portable.
//   avx512    the kernels in *_avx512.cpp (AVX-512 F/BW/VL/DQ + F16C + FMA; the bf16 ones also
//             need AVX512_BF16 for vdpbf16ps, the int8-activation quantised kernel AVX512_VNNI
//             for vpdpbusd). Compiled with per-file flags, run only here.
//   avx2      the *_avx2.cpp kernels (AVX2 + FMA + F16C): where the avx512 path is not taken
//             (no AVX-512, an AVX-512 kernel missing for the dtype, or LLMBENCH_CPU_ISA=avx2 on
//             an AVX-512 CPU): matmul_avx2.cpp for fp32, bf16 and fp16 weights at decode's 1-8
//             rows (matmul() and matmul_half()), quant_avx2.cpp for int8/int4 weights at every
//             row count, swiglu_avx2.cpp and argmax_avx2.cpp.
//   portable  the compiler-vectorised kernels (GCC target_clones: AVX-512, AVX2 or baseline
//             code picked by the loader) and OpenBLAS: what runs on any x86-64 CPU.
// A forced path the CPU lacks falls back to the best one below it that it has
// (cpu_isa_fallback_note says so; the CLI prints it once). An unknown value is bad input
// (BadInput naming the variable and the accepted values; the CLI checks it at start-up and
// exits 2; this library never exits). auto takes the widest path, except for the decode matmul
// op classes, where a measured table may pick another (decode_dispatch.h); a forced value
// overrides that table too. Deliberately not: per-call switching of the whole ISA.
#pragma once

#include <optional>
#include <string>
#include <string_view>

// The portable kernels' function multiversioning: one clone per ISA, chosen by an ifunc
// resolver when the program is loaded. Empty under ThreadSanitizer, whose instrumented resolver
// would run before its runtime is up and crash the program before main; the baseline code then
// serves every CPU (only ThreadSanitizer builds: docs/fuzzing.md).
#if defined(__SANITIZE_THREAD__)
#define LLMBENCH_ISA_CLONES
#else
#define LLMBENCH_ISA_CLONES \
  __attribute__((target_clones("arch=skylake-avx512", "arch=haswell", "default")))
#endif

namespace llmbench::cpu {

// The three paths, ordered: each needs what the ones below it need and more.
enum class IsaPath { kPortable = 0, kAvx2 = 1, kAvx512 = 2 };

// "portable", "avx2", "avx512".
const char* isa_path_name(IsaPath p);

struct CpuIsa {
  bool avx512 = false;       // AVX-512 F/BW/VL/DQ, F16C and FMA present and not disabled
  bool avx512_bf16 = false;  // and AVX512_BF16 (vdpbf16ps)
  bool avx512_vnni = false;  // and AVX512_VNNI (vpdpbusd)
  bool avx2 = false;         // AVX2, FMA and F16C present and not disabled (portable: off)
};

// The CPU's own features (CPUID), nothing forced.
CpuIsa detect_cpu_features();

// LLMBENCH_CPU_ISA's value: nullopt for auto (or unset, null or empty), else the path asked
// for. Anything else throws BadInput naming LLMBENCH_CPU_ISA and the accepted values.
std::optional<IsaPath> parse_cpu_isa_request(const char* value);

// `hw` with everything above `ceiling` turned off: what a process forced to `ceiling` runs.
CpuIsa limit_cpu_isa(const CpuIsa& hw, IsaPath ceiling);

// The widest path `isa` allows.
IsaPath widest_path(const CpuIsa& isa);

// "" when `hw` has `asked`; else one sentence saying which path runs instead and why.
std::string cpu_isa_fallback_note(const CpuIsa& hw, IsaPath asked);

// The path this process uses (computed on first call from CPUID and LLMBENCH_CPU_ISA, then
// fixed). Throws BadInput on a bad LLMBENCH_CPU_ISA (every call, until it is fixed).
const CpuIsa& cpu_isa();

// True when LLMBENCH_CPU_ISA names a path (not auto): every op class takes that path (or its
// fallback) and no measured table applies.
bool cpu_isa_forced();

// The fallback note of this process's LLMBENCH_CPU_ISA ("" when none).
std::string cpu_isa_note();

// "avx512-bf16", "avx512", "avx2" or "portable": for logs and device descriptions.
const char* cpu_isa_name();

// The CPU's ISA features that the kernels look at, as CPUID reports them (not what
// LLMBENCH_CPU_ISA forced): "avx512f avx512bw avx512vl avx512dq avx512bf16 avx512vnni avx2
// fma f16c" or the subset present. Part of the key a measured table is cached under.
std::string cpu_feature_flags();

}  // namespace llmbench::cpu
