// SwiGLU activation: the plain CPU reference (the spec) and the version the engine runs.
#pragma once

namespace llmbench::cpu {

// gate_up: [n_rows, 2 * ffn_dim], each row = [gate (ffn_dim) | up (ffn_dim)].
// out:     [n_rows, ffn_dim],     out[r, i] = silu(gate[r, i]) * up[r, i],
// silu(g) = g / (1 + exp(-g)), with std::exp (kernels/common/op_math.h's swiglu_value, which the
// CUDA kernel runs, is this formula bit for bit).
void swiglu_reference(float* out, const float* gate_up, int n_rows, int ffn_dim);

// The same product, what the engine runs: on AVX-512 CPUs (cpu_isa.h) 16 lanes at a time with
// a vector exp (swiglu_avx512.h): within 4 ulp of swiglu_reference, with the same inf, signed
// zero and NaN results (tests/kernels/test_swiglu.cpp sweeps gates over [-110, 110] and the
// special values); on CPUs with AVX2 and FMA but not that path, 8 lanes at a time by the same
// arithmetic (swiglu_avx2.h: the same bits as the AVX-512 version, tested the same way);
// elsewhere swiglu_reference itself. Each element is
// computed alone, so the result does not depend on n_rows or the thread count.
void swiglu(float* out, const float* gate_up, int n_rows, int ffn_dim);

}  // namespace llmbench::cpu
