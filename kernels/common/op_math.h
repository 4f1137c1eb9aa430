// Per-element math shared by the CPU references and the CUDA kernels, written once as
// host/device inline functions so that the CPU tests (tests/kernels/test_common_math.cpp) cover
// the formulas the GPU runs. Each function follows its kernels/cpu/<op>.h spec to the letter:
// the same operations in the same order and precision, so that on the host it reproduces the CPU
// reference bit for bit.
// Deliberately not: vectorised, or the reductions themselves (their order differs by design
// between one CPU thread and a GPU block; see kernels/cuda/device_common.cuh).
#pragma once

#include <math.h>  // expf, exp, pow, sqrt, cos, sin: the global names both nvcc and the host see

#include <cstdint>

#include "kernels/common/host_device.h"

namespace llmbench {

// ---- NaN test usable on both sides (std::isnan is host-only) ---------------------------------
LLMBENCH_HD inline bool is_nan(float x) {
#if defined(__CUDA_ARCH__)
  return isnan(x);
#else
  return x != x;  // true only for NaN (no -ffast-math in this project)
#endif
}

// ---- SwiGLU (kernels/cpu/swiglu.h) ------------------------------------------------------------

// silu(g) = g / (1 + exp(-g)). For very negative g, exp(-g) overflows to inf and the result is
// -0, not NaN. Float throughout, as in the reference (on the GPU expf is within 2 ulp).
LLMBENCH_HD inline float silu(float g) { return g / (1.0f + expf(-g)); }

// One SwiGLU output: silu(gate) * up.
LLMBENCH_HD inline float swiglu_value(float gate, float up) { return silu(gate) * up; }

// ---- RMSNorm (kernels/cpu/rmsnorm.h) ----------------------------------------------------------

// 1 / sqrt(mean of squares + eps) from the row's sum of squares (accumulated in double), rounded
// to float: the factor every element of the row is multiplied by (before the weight).
LLMBENCH_HD inline float rmsnorm_inv_rms(double sum_sq, int dim, float eps) {
  return static_cast<float>(1.0 / sqrt(sum_sq / dim + eps));
}

// ---- RoPE (kernels/cpu/rope.h) ----------------------------------------------------------------

// theta^(-2i/head_dim), in double: the rotation frequency of pair i.
LLMBENCH_HD inline double rope_inv_freq(int i, int head_dim, float theta) {
  return pow(static_cast<double>(theta), -2.0 * i / head_dim);
}

// cos and sin of position * inv_freq, computed in double and rounded to float.
LLMBENCH_HD inline void rope_cos_sin(int32_t position, double inv_freq, float* cos_out,
                                     float* sin_out) {
  const double angle = static_cast<double>(position) * inv_freq;
  *cos_out = static_cast<float>(cos(angle));
  *sin_out = static_cast<float>(sin(angle));
}

// Rotates the pair (a, b) = (x[i], x[i + head_dim/2]) by the angle whose cos/sin are c/s.
LLMBENCH_HD inline void rope_rotate_pair(float* a, float* b, float c, float s) {
  const float a0 = *a, b0 = *b;
  *a = a0 * c - b0 * s;
  *b = b0 * c + a0 * s;
}

// ---- attention (kernels/cpu/attention.h) ------------------------------------------------------

// The score scale 1/sqrt(head_dim), computed in double and rounded to float.
LLMBENCH_HD inline float attention_scale(int head_dim) {
  return static_cast<float>(1.0 / sqrt(static_cast<double>(head_dim)));
}

// ---- argmax (kernels/cpu/argmax.h) ------------------------------------------------------------

// Whether candidate (va, ia) beats (vb, ib) under the argmax rule: any NaN beats any number,
// and the lower index wins between two NaNs; otherwise the larger value wins and the lower index
// wins a tie. This is a strict total order on distinct indices, so folding candidates in any
// order or tree shape selects the same winner as the reference's left-to-right scan: the first
// NaN if the row has one, else the first maximum. (-inf, INT32_MAX) loses to every real element,
// so it is the identity for threads that own no column.
LLMBENCH_HD inline bool argmax_prefers(float va, int32_t ia, float vb, int32_t ib) {
  const bool a_nan = is_nan(va), b_nan = is_nan(vb);
  if (a_nan != b_nan) return a_nan;
  if (a_nan || va == vb) return ia < ib;
  return va > vb;
}

}  // namespace llmbench
