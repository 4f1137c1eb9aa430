// Which path (cpu_isa.h's avx512 / avx2 / portable) each decode op class takes: the weight
// matmul of decode's 1-8 rows, per weight dtype and row bucket. On these CPUs the widest path
// is not always the fastest there (on a Zen 4 VM the AVX-512 decode kernels took 1.03-1.30x the
// AVX2 ones' time at batch 1, issue #45), so the choice is a table the caller measures
// (engine/bench/decode_dispatch_probe.h) and installs; without one every class takes the widest
// path the CPU has for its dtype, as before. A forced LLMBENCH_CPU_ISA overrides the table.
// Prefill rows (more than kDecodeRowsMax) are not in the table: there the AVX-512 kernels took
// about half the AVX2 time (#45), an obvious choice, so they keep the widest path.
// Deliberately not: a registry of kernels, or per-shape tables inside the kernels library.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/dtype.h"
#include "kernels/cpu/cpu_isa.h"

namespace llmbench::cpu {

// Row counts that count as decode (matmul.h's kFewRowsMax).
inline constexpr int kDecodeRowsMax = 8;

// The op classes: index = 2 x dtype + bucket, bucket 0 for one row (batch-1 decode), 1 for
// 2..kDecodeRowsMax rows. Named "decode_<dtype>_m1" and "decode_<dtype>_m2_8".
inline constexpr int kDecodeClasses = 10;
int decode_class_index(DType dtype, int m);  // m in 1..kDecodeRowsMax
DType decode_class_dtype(int c);
// The row count a class is timed at: 1, or 4 for the 2-8 bucket (its middle).
int decode_class_timed_rows(int c);
std::string decode_class_name(int c);
std::optional<int> decode_class_from_name(std::string_view name);

// The paths `isa` can run for `dtype`'s decode matmul, widest first: avx512 where the CPU has
// the kernel for the dtype (bf16 needs AVX512_BF16, int8/int4 AVX512_VNNI), avx2, portable.
std::vector<IsaPath> decode_candidates(const CpuIsa& isa, DType dtype);

// nullopt: the class takes its widest candidate.
using DecodeTable = std::array<std::optional<IsaPath>, kDecodeClasses>;

// The rule, as a pure function: forced -> the widest candidate of `isa` (already limited to
// the forced path); else the table's path where it is one of the candidates; else the widest.
IsaPath choose_decode_path(const CpuIsa& isa, bool forced, const DecodeTable& table, int c);

// The process's table (read by every decode matmul; set it before running kernels, not while
// they run).
void set_decode_table(const DecodeTable& table);
DecodeTable decode_table();
// choose_decode_path for this process (cpu_isa(), cpu_isa_forced(), the installed table).
IsaPath decode_path(DType dtype, int m);

// cpu_isa_name(), then the decode classes whose path differs from their dtype's widest
// candidate: "avx2" or "avx512-bf16 (decode_bf16_m1 avx2, decode_fp16_m1 avx2)". What a run
// stores as its CPU kernels' path (run.cpu_isa): the classes not listed took the widest path.
std::string cpu_dispatch_description();

// The decode matmul of `dtype` on path `p` (which must be one of decode_candidates(cpu_isa(),
// dtype)): out[m, n] = x[m, k] . w[n, k]^T with w fp32 (float), bf16/fp16 (uint16_t) or
// int8/int4 in the packed layout matmul_quant_vnni reads (quant.h). What matmul(),
// matmul_half() and matmul_quant_vnni() run at 1..kDecodeRowsMax rows, for the measurement and
// the tests.
void decode_matmul_on(IsaPath p, float* out, const float* x, const void* w, DType dtype, int m,
                      int n, int k, int lda);

// The three ops' decode paths (in matmul.cpp, matmul_half.cpp and quant.cpp), unchecked.
void matmul_f32_on(IsaPath p, float* out, const float* x, const float* w, int m, int n, int k,
                   int lda);
void matmul_half_on(IsaPath p, float* out, const float* x, const std::uint16_t* w, DType dtype,
                    int m, int n, int k, int lda);
void matmul_quant_vnni_on(IsaPath p, float* out, const float* x, const void* w, DType dtype,
                          int m, int n, int k, int lda);

}  // namespace llmbench::cpu
