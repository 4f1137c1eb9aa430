// AVX-512 SwiGLU (see swiglu.h): reached only through cpu::swiglu's dispatch.
#pragma once
#include "kernels/cpu/avx512_namespace.h"

namespace llmbench::cpu::LLMBENCH_AVX512_NS {

// swiglu_reference's product, 16 elements at a time. exp(x) by Cody-Waite range reduction
// (x = n ln2 + r, |r| <= ln2 / 2, ln2 split in a high part exact in float and a low part), a
// degree-7 Taylor polynomial of e^r in Horner form with FMAs (truncation error below 6e-9
// relative: under 0.1 ulp) and vscalefps for 2^n, which gives inf past the float range and
// gradual underflow to 0 below it, as std::exp does. x is clamped to [-104, 89] first (e^x is
// 0 or inf in float beyond either end; the clamp keeps inf and NaN out of the reduction). Then
// g / (1 + e) * u in the reference's order, with IEEE division.
void swiglu_f32(float* out, const float* gate_up, int n_rows, int ffn_dim);

}  // namespace llmbench::cpu::LLMBENCH_AVX512_NS
