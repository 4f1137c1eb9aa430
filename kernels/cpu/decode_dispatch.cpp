// The decode op classes' table and rule (see decode_dispatch.h).
#include "kernels/cpu/decode_dispatch.h"

#include <algorithm>
#include <atomic>

#include "kernels/common/error.h"

namespace llmbench::cpu {

namespace {

constexpr DType kDtypes[] = {DType::kFp32, DType::kFp16, DType::kBf16, DType::kInt8,
                             DType::kInt4};

// 0: no entry (the widest candidate); else 1 + an IsaPath. Static storage starts at zero.
// Atomics so that a reader on another thread never sees a torn value; the table is meant to be
// set before kernels run.
std::array<std::atomic<int>, kDecodeClasses> g_table;

}  // namespace

int decode_class_index(DType dtype, int m) { return 2 * int(dtype) + (m <= 1 ? 0 : 1); }

DType decode_class_dtype(int c) { return kDtypes[std::clamp(c / 2, 0, 4)]; }

int decode_class_timed_rows(int c) { return c % 2 == 0 ? 1 : 4; }

std::string decode_class_name(int c) {
  return "decode_" + std::string(dtype_name(decode_class_dtype(c))) +
         (c % 2 == 0 ? "_m1" : "_m2_8");
}

std::optional<int> decode_class_from_name(std::string_view name) {
  for (int c = 0; c < kDecodeClasses; ++c)
    if (decode_class_name(c) == name) return c;
  return std::nullopt;
}

namespace {

// Whether `isa` has dtype's decode kernel on path p (no allocation: decode_path runs per op).
bool allows(const CpuIsa& isa, DType dtype, IsaPath p) {
  switch (p) {
    case IsaPath::kAvx512:
      return dtype == DType::kBf16 ? isa.avx512_bf16
             : dtype_is_quantized(dtype) ? isa.avx512_vnni
                                         : isa.avx512;
    case IsaPath::kAvx2: return isa.avx2;
    case IsaPath::kPortable: return true;
  }
  return false;
}

IsaPath widest(const CpuIsa& isa, DType dtype) {
  return allows(isa, dtype, IsaPath::kAvx512) ? IsaPath::kAvx512
         : isa.avx2                          ? IsaPath::kAvx2
                                             : IsaPath::kPortable;
}

}  // namespace

std::vector<IsaPath> decode_candidates(const CpuIsa& isa, DType dtype) {
  std::vector<IsaPath> v;
  for (IsaPath p : {IsaPath::kAvx512, IsaPath::kAvx2, IsaPath::kPortable})
    if (allows(isa, dtype, p)) v.push_back(p);
  return v;
}

IsaPath choose_decode_path(const CpuIsa& isa, bool forced, const DecodeTable& table, int c) {
  const DType dtype = decode_class_dtype(c);
  if (!forced && table[c] && allows(isa, dtype, *table[c])) return *table[c];
  return widest(isa, dtype);
}

void set_decode_table(const DecodeTable& table) {
  for (int c = 0; c < kDecodeClasses; ++c) g_table[c].store(table[c] ? 1 + int(*table[c]) : 0);
}

DecodeTable decode_table() {
  DecodeTable t;
  for (int c = 0; c < kDecodeClasses; ++c) {
    const int v = g_table[c].load();
    if (v > 0) t[c] = IsaPath(v - 1);
  }
  return t;
}

IsaPath decode_path(DType dtype, int m) {
  const CpuIsa& isa = cpu_isa();
  const int v = g_table[decode_class_index(dtype, m)].load(std::memory_order_relaxed);
  if (v == 0 || cpu_isa_forced() || !allows(isa, dtype, IsaPath(v - 1)))
    return widest(isa, dtype);
  return IsaPath(v - 1);
}

std::string cpu_dispatch_description() {
  std::string s = cpu_isa_name();
  std::string other;
  for (int c = 0; c < kDecodeClasses; ++c) {
    const DType d = decode_class_dtype(c);
    const IsaPath p = decode_path(d, decode_class_timed_rows(c));
    if (p == widest(cpu_isa(), d)) continue;
    other += (other.empty() ? "" : ", ") + decode_class_name(c) + " " + isa_path_name(p);
  }
  return other.empty() ? s : s + " (" + other + ")";
}

void decode_matmul_on(IsaPath p, float* out, const float* x, const void* w, DType dtype, int m,
                      int n, int k, int lda) {
  LLMBENCH_CHECK(allows(cpu_isa(), dtype, p),
                 "a path this CPU (and LLMBENCH_CPU_ISA) allows for the dtype");
  switch (dtype) {
    case DType::kFp32:
      matmul_f32_on(p, out, x, static_cast<const float*>(w), m, n, k, lda);
      return;
    case DType::kBf16:
    case DType::kFp16:
      matmul_half_on(p, out, x, static_cast<const std::uint16_t*>(w), dtype, m, n, k, lda);
      return;
    case DType::kInt8:
    case DType::kInt4:
      matmul_quant_vnni_on(p, out, x, w, dtype, m, n, k, lda);
      return;
  }
}

}  // namespace llmbench::cpu
