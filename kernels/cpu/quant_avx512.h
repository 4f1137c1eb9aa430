// The AVX-512 decode kernel of the int8/int4 block formats (quant_avx512.cpp, compiled with
// AVX-512 flags and called only when cpu_isa() says the CPU has them). Internal to kernels/cpu:
// the public op is matmul_quant() (quant.h), whose reference is the spec this is tested against.
#pragma once
#include "kernels/cpu/avx512_namespace.h"

namespace llmbench::cpu::LLMBENCH_AVX512_NS {

// out[m, n] = x[m, k] . dequantise(w)[n, k]^T for int8 (int4 = false) or int4 blocks (layout:
// quant.h), x rows lda apart, k % 32 == 0. Each weight block is read once, widened in registers
// (vpmovsxbd / nibbles vpmovzxbd, vcvtdq2ps, times the scale), and multiplied into up to 4 x
// rows at a time with FMAs into four accumulators per row (the halves of even and odd blocks).
// With more than 4 rows each weight row is widened once into a per-thread fp32 buffer and the
// passes read that (the same floats, so the same sums): each output's sum is the same sequence
// whatever m is.
void matmul_quant_decode(float* out, const float* x, int lda, const void* w, bool int4, int m,
                         int n, int k);

}  // namespace llmbench::cpu::LLMBENCH_AVX512_NS
