// AVX-512 weight-streaming matmul kernels (matmul_avx512.cpp, compiled with AVX-512 flags and
// called only when cpu_isa() says the CPU has them). Internal to kernels/cpu: the public ops are
// matmul() and matmul_half(), whose references are the spec these are tested against.
//
// One kernel shape for every row count: a tile of R activation rows x C weight rows holds R*C
// vector accumulators over the whole k (each weight vector loaded once per tile and used for all
// R rows), then each accumulator is reduced to one output. Every output (i, j) is therefore the
// same sequence of vector multiply-adds and the same final reduction whatever m, R or C are:
// results are bit-identical across batch sizes and between the decode and prefill paths.
// Decode's 1-8 rows read the weights in another order, for bandwidth, with the same operations
// per output: one weight row at a time to its end, each thread on its own contiguous run of rows
// shared out at run time (panel_schedule.h), a software prefetch ahead in that stream, two
// chunks of the row in flight. 16-bit weights are never widened into a buffer (vdpbf16ps reads
// bf16 as stored, vcvtph2ps widens fp16 in registers).
// Deliberately not: packed panels or k-blocking (the weight tile stays in L1/L2 across the rows;
// see the measured rates in tests/bench/bench_kernels.cpp).
#pragma once
#include "kernels/cpu/avx512_namespace.h"
#include <cstdint>

namespace llmbench::cpu::LLMBENCH_AVX512_NS {

// out[m, n] = x[m, k] . w[n, k]^T, fp32 (x rows lda apart).
void matmul_f32(float* out, const float* x, int lda, const float* w, int m, int n, int k);

// bf16 weights with vdpbf16ps (pairs of bf16 products summed into fp32 lanes). xb: the
// activations already in bf16, [m, ldx] with ldx >= round_up(k, 32) and zeros from k to
// round_up(k, 32) (to_bf16_padded writes that).
void matmul_bf16(float* out, const std::uint16_t* xb, int ldx, const std::uint16_t* w, int m,
                 int n, int k);

// fp16 weights widened in registers (vcvtph2ps) and multiplied in fp32 FMAs with xr, the
// activations already rounded to fp16 values and held as fp32 ([m, ldx], ldx >= k).
void matmul_fp16(float* out, const float* xr, int ldx, const std::uint16_t* w, int m, int n,
                 int k);

// The bf16 bits of x[i, 0..k) (round to nearest even, NaN kept quiet: fp32_to_bf16 of
// kernels/common/half.h, vectorised) into dst[i, 0..ld), zero beyond k. ld = round_up(k, 32).
void to_bf16_padded(std::uint16_t* dst, int ld, const float* x, int lda, int m, int k);

// fp32 values of x rounded to fp16 (fp16_to_fp32(fp32_to_fp16(v)), via F16C) into dst[i, 0..k).
void round_to_fp16_rows(float* dst, const float* x, int lda, int m, int k);

// Sum of n floats read once with AVX-512 loads (eight independent accumulators): every thread
// reads its own contiguous chunk as `streams` (1..8) sequential parts side by side, optionally
// prefetching prefetch_bytes ahead (0: only the hardware prefetchers). The roofline's
// read-bandwidth test (engine/bench/roofline.cpp) with the variant bench_kernels measured fastest.
float read_sum_f32(const float* data, std::int64_t n, int streams, int prefetch_bytes);

}  // namespace llmbench::cpu::LLMBENCH_AVX512_NS
