// AVX2 SwiGLU (see swiglu.h): reached only through cpu::swiglu's dispatch, on a CPU with AVX2
// and FMA but without the AVX-512 path (swiglu_avx512.h is the version it follows).
#pragma once

namespace llmbench::cpu::avx2 {

// swiglu_reference's product, 8 elements at a time, by the AVX-512 version's arithmetic:
// x = -g clamped to [-104, 89], e^x by Cody-Waite reduction (x = n ln2 + r) and the same
// degree-7 Horner polynomial, then g / (1 + e) * u with IEEE division. AVX2 has no vscalefps,
// so 2^n multiplies in two steps, 2^(n >> 1) then 2^(n - (n >> 1)), each a normal float for
// every n the clamp allows ([-150, 128]): one rounding at the end, inf past the float range
// and gradual underflow below it, the same bits as vscalefps gives. A row's last ffn_dim % 8
// elements go through the same vector code on a zero-padded copy.
void swiglu_f32(float* out, const float* gate_up, int n_rows, int ffn_dim);

}  // namespace llmbench::cpu::avx2
