// CPUID + LLMBENCH_CPU_ISA (see cpu_isa.h).
#include "kernels/cpu/cpu_isa.h"

#include <cstdlib>
#include <cstring>

#include "kernels/common/error.h"

namespace llmbench::cpu {

const char* isa_path_name(IsaPath p) {
  switch (p) {
    case IsaPath::kAvx512: return "avx512";
    case IsaPath::kAvx2: return "avx2";
    case IsaPath::kPortable: return "portable";
  }
  return "portable";
}

CpuIsa detect_cpu_features() {
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
  return isa;
}

std::optional<IsaPath> parse_cpu_isa_request(const char* value) {
  if (!value || !*value || std::strcmp(value, "auto") == 0) return std::nullopt;
  if (std::strcmp(value, "avx512") == 0) return IsaPath::kAvx512;
  if (std::strcmp(value, "avx2") == 0) return IsaPath::kAvx2;
  if (std::strcmp(value, "portable") == 0) return IsaPath::kPortable;
  throw BadInput(std::string("LLMBENCH_CPU_ISA='") + value +
                 "': expected auto, avx512, avx2 or portable");
}

CpuIsa limit_cpu_isa(const CpuIsa& hw, IsaPath ceiling) {
  CpuIsa isa = hw;
  if (ceiling < IsaPath::kAvx512) isa.avx512 = isa.avx512_bf16 = isa.avx512_vnni = false;
  if (ceiling < IsaPath::kAvx2) isa.avx2 = false;
  return isa;
}

IsaPath widest_path(const CpuIsa& isa) {
  return isa.avx512 ? IsaPath::kAvx512 : isa.avx2 ? IsaPath::kAvx2 : IsaPath::kPortable;
}

std::string cpu_isa_fallback_note(const CpuIsa& hw, IsaPath asked) {
  const IsaPath have = widest_path(limit_cpu_isa(hw, asked));
  if (have == asked) return "";
  return std::string("LLMBENCH_CPU_ISA=") + isa_path_name(asked) + ": this CPU lacks " +
         (asked == IsaPath::kAvx512 ? "AVX-512 (F/BW/VL/DQ with FMA and F16C)"
                                    : "AVX2 with FMA and F16C") +
         "; the CPU kernels take the " + isa_path_name(have) + " path";
}

namespace {

struct ProcessIsa {
  CpuIsa isa;
  bool forced = false;
  std::string note;
};

ProcessIsa decide() {
  ProcessIsa p;
  const CpuIsa hw = detect_cpu_features();
  const std::optional<IsaPath> want = parse_cpu_isa_request(std::getenv("LLMBENCH_CPU_ISA"));
  p.isa = want ? limit_cpu_isa(hw, *want) : hw;
  p.forced = want.has_value();
  if (want) p.note = cpu_isa_fallback_note(hw, *want);
  return p;
}

const ProcessIsa& process_isa() {
  // A throwing initialiser leaves the static uninitialised: the next call tries (and throws)
  // again, so a bad value is never silently taken for auto.
  static const ProcessIsa p = decide();
  return p;
}

}  // namespace

const CpuIsa& cpu_isa() { return process_isa().isa; }

bool cpu_isa_forced() { return process_isa().forced; }

std::string cpu_isa_note() { return process_isa().note; }

const char* cpu_isa_name() {
  const CpuIsa& isa = cpu_isa();
  return isa.avx512_bf16 ? "avx512-bf16" : isa.avx512 ? "avx512" : isa.avx2 ? "avx2" : "portable";
}

std::string cpu_feature_flags() {
  std::string flags;
#if defined(__x86_64__)
  __builtin_cpu_init();
  auto add = [&flags](bool present, const char* name) {
    if (!present) return;
    if (!flags.empty()) flags += ' ';
    flags += name;
  };
  // __builtin_cpu_supports needs literal names, hence one line each.
  add(__builtin_cpu_supports("avx512f"), "avx512f");
  add(__builtin_cpu_supports("avx512bw"), "avx512bw");
  add(__builtin_cpu_supports("avx512vl"), "avx512vl");
  add(__builtin_cpu_supports("avx512dq"), "avx512dq");
  add(__builtin_cpu_supports("avx512bf16"), "avx512bf16");
  add(__builtin_cpu_supports("avx512vnni"), "avx512vnni");
  add(__builtin_cpu_supports("avx2"), "avx2");
  add(__builtin_cpu_supports("fma"), "fma");
  add(__builtin_cpu_supports("f16c"), "f16c");
#endif
  return flags.empty() ? "baseline" : flags;
}

}  // namespace llmbench::cpu
