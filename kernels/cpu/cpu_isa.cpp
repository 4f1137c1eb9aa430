// CPUID + LLMBENCH_CPU_ISA (see cpu_isa.h).
#include "kernels/cpu/cpu_isa.h"

#include <cstdlib>
#include <cstring>

namespace llmbench::cpu {

namespace {

CpuIsa detect() {
  CpuIsa isa;
#if defined(__x86_64__)
  __builtin_cpu_init();
  isa.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("f16c") && __builtin_cpu_supports("fma");
  isa.avx512_bf16 = isa.avx512 && __builtin_cpu_supports("avx512bf16");
  isa.avx512_vnni = isa.avx512 && __builtin_cpu_supports("avx512vnni");
  isa.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
#endif
  const char* want = std::getenv("LLMBENCH_CPU_ISA");
  if (want && std::strcmp(want, "portable") == 0) isa = CpuIsa{};
  return isa;
}

}  // namespace

const CpuIsa& cpu_isa() {
  static const CpuIsa isa = detect();
  return isa;
}

const char* cpu_isa_name() {
  const CpuIsa& isa = cpu_isa();
  return isa.avx512_bf16 ? "avx512-bf16" : isa.avx512 ? "avx512" : isa.avx2 ? "avx2" : "portable";
}

}  // namespace llmbench::cpu
