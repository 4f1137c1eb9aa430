// The CPU path choice (cpu_isa.h, decode_dispatch.h): LLMBENCH_CPU_ISA's values and its bad
// ones, the fallback below a path the CPU lacks, the rule (forced > table > widest) as a pure
// function, and with a table installed in this process the kernels the public ops call are the
// ones it names (bit for bit against decode_matmul_on and the kernels themselves). Every path
// this CPU has is checked against its reference, and the int8/int4 paths against each other
// (identical bits); the paths the CPU lacks (decode_candidates) are not run.
#include <cblas.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/common/error.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/decode_dispatch.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_avx2.h"
#include "kernels/cpu/matmul_half.h"
#include "kernels/cpu/quant.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

constexpr DType kAll[] = {DType::kFp32, DType::kFp16, DType::kBf16, DType::kInt8, DType::kInt4};

CpuIsa full_isa() { return {true, true, true, true}; }
CpuIsa avx2_isa() { return {false, false, false, true}; }

TEST(CpuIsaRequest, AcceptsAutoAndTheThreePaths) {
  EXPECT_EQ(parse_cpu_isa_request(nullptr), std::nullopt);
  EXPECT_EQ(parse_cpu_isa_request(""), std::nullopt);
  EXPECT_EQ(parse_cpu_isa_request("auto"), std::nullopt);
  EXPECT_EQ(parse_cpu_isa_request("avx512"), IsaPath::kAvx512);
  EXPECT_EQ(parse_cpu_isa_request("avx2"), IsaPath::kAvx2);
  EXPECT_EQ(parse_cpu_isa_request("portable"), IsaPath::kPortable);
}

TEST(CpuIsaRequest, RefusesAnythingElseNamingTheVariableAndValues) {
  for (const char* bad : {"AVX2", "sse4", "avx2 ", "avx512-bf16", "native", "0"}) {
    try {
      parse_cpu_isa_request(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const BadInput& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("LLMBENCH_CPU_ISA='" + std::string(bad) + "'"), std::string::npos)
          << what;
      EXPECT_NE(what.find("auto, avx512, avx2 or portable"), std::string::npos) << what;
    }
  }
}

TEST(CpuIsaRequest, ForcedPathFallsBackToTheBestBelowItWithANote) {
  // avx2 on an AVX-512 CPU: the AVX-512 kernels are off, AVX2 stays; nothing to note.
  const CpuIsa a = limit_cpu_isa(full_isa(), IsaPath::kAvx2);
  EXPECT_FALSE(a.avx512 || a.avx512_bf16 || a.avx512_vnni);
  EXPECT_TRUE(a.avx2);
  EXPECT_EQ(widest_path(a), IsaPath::kAvx2);
  EXPECT_EQ(cpu_isa_fallback_note(full_isa(), IsaPath::kAvx2), "");
  // avx512 on an AVX2 CPU: avx2, said once.
  EXPECT_EQ(widest_path(limit_cpu_isa(avx2_isa(), IsaPath::kAvx512)), IsaPath::kAvx2);
  const std::string note = cpu_isa_fallback_note(avx2_isa(), IsaPath::kAvx512);
  EXPECT_NE(note.find("LLMBENCH_CPU_ISA=avx512"), std::string::npos) << note;
  EXPECT_NE(note.find("the avx2 path"), std::string::npos) << note;
  // avx2 or avx512 on a CPU with neither: portable.
  EXPECT_NE(cpu_isa_fallback_note(CpuIsa{}, IsaPath::kAvx2).find("the portable path"),
            std::string::npos);
  EXPECT_EQ(widest_path(limit_cpu_isa(full_isa(), IsaPath::kPortable)), IsaPath::kPortable);
  EXPECT_EQ(cpu_isa_fallback_note(CpuIsa{}, IsaPath::kPortable), "");
}

TEST(DecodeClasses, NamesAndIndicesRoundTrip) {
  EXPECT_EQ(decode_class_name(decode_class_index(DType::kFp32, 1)), "decode_fp32_m1");
  EXPECT_EQ(decode_class_name(decode_class_index(DType::kBf16, 5)), "decode_bf16_m2_8");
  EXPECT_EQ(decode_class_index(DType::kInt4, 2), decode_class_index(DType::kInt4, 8));
  for (int c = 0; c < kDecodeClasses; ++c) {
    EXPECT_EQ(decode_class_from_name(decode_class_name(c)), c);
    EXPECT_EQ(decode_class_index(decode_class_dtype(c), decode_class_timed_rows(c)), c);
  }
  EXPECT_EQ(decode_class_from_name("decode_fp64_m1"), std::nullopt);
}

TEST(DecodeClasses, CandidatesFollowTheKernelsEachDtypeHas) {
  using V = std::vector<IsaPath>;
  const V three = {IsaPath::kAvx512, IsaPath::kAvx2, IsaPath::kPortable};
  const V two = {IsaPath::kAvx2, IsaPath::kPortable};
  for (DType d : kAll) EXPECT_EQ(decode_candidates(full_isa(), d), three);
  for (DType d : kAll) EXPECT_EQ(decode_candidates(avx2_isa(), d), two);
  for (DType d : kAll) EXPECT_EQ(decode_candidates(CpuIsa{}, d), V{IsaPath::kPortable});
  // AVX-512 without BF16 and VNNI: bf16 and int8/int4 have no AVX-512 decode kernel.
  const CpuIsa plain512{true, false, false, true};
  EXPECT_EQ(decode_candidates(plain512, DType::kFp16), three);
  EXPECT_EQ(decode_candidates(plain512, DType::kBf16), two);
  EXPECT_EQ(decode_candidates(plain512, DType::kInt8), two);
}

TEST(DecodeRule, ForcedBeatsTableBeatsWidest) {
  DecodeTable t;
  const int fp32 = decode_class_index(DType::kFp32, 1);
  const int bf16 = decode_class_index(DType::kBf16, 1);
  const int fp16 = decode_class_index(DType::kFp16, 1);
  const int int8 = decode_class_index(DType::kInt8, 4);
  t[fp32] = IsaPath::kAvx2;
  t[bf16] = IsaPath::kPortable;
  t[int8] = IsaPath::kAvx512;
  EXPECT_EQ(choose_decode_path(full_isa(), false, t, fp32), IsaPath::kAvx2);
  EXPECT_EQ(choose_decode_path(full_isa(), false, t, bf16), IsaPath::kPortable);
  EXPECT_EQ(choose_decode_path(full_isa(), false, t, fp16), IsaPath::kAvx512);  // no entry
  // Forced (the isa already limited to the forced path): the table is ignored.
  EXPECT_EQ(choose_decode_path(full_isa(), true, t, bf16), IsaPath::kAvx512);
  const CpuIsa forced_avx2 = limit_cpu_isa(full_isa(), IsaPath::kAvx2);
  EXPECT_EQ(choose_decode_path(forced_avx2, true, t, bf16), IsaPath::kAvx2);
  // A table entry the CPU cannot run is not taken.
  EXPECT_EQ(choose_decode_path(avx2_isa(), false, t, int8), IsaPath::kAvx2);
}

// ---- the process's own table and kernels -----------------------------------------------------

struct Operands {
  DType dtype;
  int m, n, k;
  std::vector<float> x;           // [m, k]
  std::vector<std::uint16_t> w16;  // bf16/fp16
  std::vector<float> w32;          // fp32
  std::vector<std::uint8_t> wq;    // int8/int4 packed (what the engine stores)
  std::vector<std::uint8_t> wq_rows;  // the same blocks row-major (what the reference reads)
  const void* w() const {
    return dtype == DType::kFp32   ? static_cast<const void*>(w32.data())
           : dtype_is_quantized(dtype) ? static_cast<const void*>(wq.data())
                                   : static_cast<const void*>(w16.data());
  }
};

Operands operands(DType dtype, int m, int n, int k, unsigned seed) {
  Operands o{dtype, m, n, k, test::random_floats(std::size_t(m) * k, seed), {}, {}, {}, {}};
  const std::vector<float> w = test::random_floats(std::size_t(n) * k, seed + 1);
  if (dtype == DType::kFp32) {
    o.w32 = w;
  } else if (dtype_is_quantized(dtype)) {
    o.wq_rows.resize(std::size_t(n * quant_row_bytes(dtype, k)));
    quantize_rows_reference(o.wq_rows.data(), w.data(), dtype, n, k);
    o.wq.resize(o.wq_rows.size());
    quant_pack_reference(o.wq.data(), o.wq_rows.data(), dtype, n, k);
  } else {
    o.w16.resize(w.size());
    narrow_to_half(o.w16.data(), w.data(), std::int64_t(w.size()), dtype);
  }
  return o;
}

// What the engine calls for a weight matrix of o's dtype.
std::vector<float> public_op(const Operands& o) {
  std::vector<float> out(std::size_t(o.m) * o.n);
  if (o.dtype == DType::kFp32)
    matmul(out.data(), o.x.data(), o.w32.data(), o.m, o.n, o.k, o.k);
  else if (dtype_is_quantized(o.dtype))
    matmul_quant_vnni(out.data(), o.x.data(), o.wq.data(), o.dtype, o.m, o.n, o.k, o.k);
  else
    matmul_half(out.data(), o.x.data(), o.w16.data(), o.dtype, o.m, o.n, o.k, o.k);
  return out;
}

std::vector<float> on_path(IsaPath p, const Operands& o) {
  std::vector<float> out(std::size_t(o.m) * o.n);
  decode_matmul_on(p, out.data(), o.x.data(), o.w(), o.dtype, o.m, o.n, o.k, o.k);
  return out;
}

std::vector<float> reference(const Operands& o) {
  std::vector<float> out(std::size_t(o.m) * o.n);
  if (o.dtype == DType::kFp32)
    matmul_reference(out.data(), o.x.data(), o.w32.data(), o.m, o.n, o.k, o.k);
  else if (dtype_is_quantized(o.dtype)) {
    matmul_quant_vnni_reference(out.data(), o.x.data(), o.wq_rows.data(), o.dtype, o.m, o.n,
                                o.k, o.k);
  } else {
    matmul_half_reference(out.data(), o.x.data(), o.w16.data(), o.dtype, o.m, o.n, o.k, o.k);
  }
  return out;
}

// Restores the process's table when a test ends, pass or fail.
struct TableGuard {
  DecodeTable saved = decode_table();
  ~TableGuard() { set_decode_table(saved); }
};

bool bits_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(DecodeDispatch, TheTableChoosesTheKernelsThePublicOpsCall) {
  if (cpu_isa_forced()) GTEST_SKIP() << "LLMBENCH_CPU_ISA forces every class's path";
  TableGuard guard;
  for (DType d : kAll) {
    const std::vector<IsaPath> cand = decode_candidates(cpu_isa(), d);
    for (int m : {1, 3, 8}) {
      const Operands o = operands(d, m, 37, 256, 11 + m);
      for (IsaPath p : cand) {
        DecodeTable t;
        t[decode_class_index(d, m)] = p;
        set_decode_table(t);
        EXPECT_EQ(decode_path(d, m), p);
        EXPECT_TRUE(bits_equal(public_op(o), on_path(p, o)))
            << dtype_name(d) << " m " << m << " table says " << isa_path_name(p);
      }
    }
  }
}

TEST(DecodeDispatch, AvxTwoAndPortableGiveDifferentBitsSoTheCheckAboveMeansSomething) {
  // fp32 and the 16-bit dtypes sum in different orders on each path (int8/int4 agree by
  // design; CandidatesAgreeBitForBit below).
  if (!cpu_isa().avx2) GTEST_SKIP() << "no AVX2 + FMA + F16C (" << cpu_isa_name() << ")";
  for (DType d : {DType::kFp32, DType::kBf16, DType::kFp16}) {
    const Operands o = operands(d, 1, 37, 733, 5);
    EXPECT_FALSE(bits_equal(on_path(IsaPath::kAvx2, o), on_path(IsaPath::kPortable, o)))
        << dtype_name(d);
  }
}

TEST(DecodeDispatch, EachPathRunsTheKernelItIsNamedFor) {
  const Operands o = operands(DType::kFp32, 1, 37, 733, 3);
  std::vector<float> direct(37);
  cblas_sgemv(CblasRowMajor, CblasNoTrans, 37, 733, 1.0f, o.w32.data(), 733, o.x.data(), 1, 0.0f,
              direct.data(), 1);
  EXPECT_TRUE(bits_equal(on_path(IsaPath::kPortable, o), direct));
  if (!cpu_isa().avx2) GTEST_SKIP() << "no AVX2 + FMA + F16C (" << cpu_isa_name() << ")";
  avx2::matmul_f32_rows(direct.data(), o.x.data(), 733, o.w32.data(), 1, 37, 733);
  EXPECT_TRUE(bits_equal(on_path(IsaPath::kAvx2, o), direct));
  for (DType d : {DType::kBf16, DType::kFp16}) {
    const Operands h = operands(d, 5, 37, 733, 4);
    std::vector<float> out(5 * 37);
    avx2::matmul_half_rows(out.data(), h.x.data(), 733, h.w16.data(), d, 5, 37, 733);
    EXPECT_TRUE(bits_equal(on_path(IsaPath::kAvx2, h), out)) << dtype_name(d);
  }
}

TEST(DecodeDispatch, EveryPathThisCpuHasMatchesItsReference) {
  for (DType d : kAll) {
    for (int m : {1, 2, 7, 8}) {
      // k 736: a multiple of the quantisation block, not of any vector width's tile.
      const Operands o = operands(d, m, 19, 736, 21 + m);
      const std::vector<float> ref = reference(o);
      // Tolerances: fp32 sums in fp32 (k 736 of |x w| <= 1); the 16-bit and int8 paths
      // round x as their references do; vdpbf16ps keeps bf16 products exact but sums in pairs.
      const double atol = dtype_is_quantized(d) ? 2e-3 : 1e-3;
      for (IsaPath p : decode_candidates(cpu_isa(), d))
        EXPECT_TRUE(test::all_close(on_path(p, o), ref, atol, 1e-4))
            << dtype_name(d) << " m " << m << " " << isa_path_name(p);
    }
  }
}

TEST(DecodeDispatch, QuantisedCandidatesAgreeBitForBit) {
  for (DType d : {DType::kInt8, DType::kInt4})
    for (int m : {1, 4, 8}) {
      // n 37: two full 16-column panels and a partial one.
      const Operands o = operands(d, m, 37, 256, 31 + m);
      const std::vector<float> portable = on_path(IsaPath::kPortable, o);
      for (IsaPath p : decode_candidates(cpu_isa(), d))
        EXPECT_TRUE(bits_equal(on_path(p, o), portable))
            << dtype_name(d) << " m " << m << " " << isa_path_name(p);
    }
}

TEST(DecodeDispatch, APathTheCpuLacksIsRefused) {
  if (cpu_isa().avx512) GTEST_SKIP() << "this CPU has every path";
  const Operands o = operands(DType::kFp32, 1, 8, 64, 1);
  EXPECT_THROW(on_path(IsaPath::kAvx512, o), Error);
}

TEST(DecodeDispatch, TheDescriptionNamesTheClassesOffTheWidestPath) {
  if (cpu_isa_forced()) GTEST_SKIP() << "LLMBENCH_CPU_ISA forces every class's path";
  TableGuard guard;
  set_decode_table(DecodeTable{});
  EXPECT_EQ(cpu_dispatch_description(), cpu_isa_name());
  if (!cpu_isa().avx2) GTEST_SKIP() << "no AVX2: portable is the only path";
  DecodeTable t;
  t[decode_class_index(DType::kFp32, 1)] = IsaPath::kPortable;
  t[decode_class_index(DType::kInt4, 4)] = IsaPath::kPortable;
  set_decode_table(t);
  EXPECT_EQ(cpu_dispatch_description(), std::string(cpu_isa_name()) +
                                            " (decode_fp32_m1 portable, decode_int4_m2_8 portable)");
}

}  // namespace
}  // namespace llmbench::cpu
