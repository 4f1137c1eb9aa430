// SwiGLU fused into the down projection's input: the plain CPU reference (the spec). The CUDA
// backend's decode path runs it as one kernel (kernels/cuda/swiglu_down.cuh: the GEMV reads
// gate_up and computes silu(g) * u itself, so neither the swiglu kernel nor the act buffer's
// round trip remains); the CPU backend runs the unfused pair (Backend::swiglu_down's default),
// whose fast kernels this reference is not. Used by the decoder with --fuse small (op
// swiglu_down; docs/variants.md).
#pragma once
#include "kernels/common/dtype.h"

namespace llmbench::cpu {

// out[r, j] = sum_i act[r, i] * w[j, i], act[r, i] = swiglu(gate_up)[r, i] (swiglu.h's
// swiglu_reference), for n_rows rows: gate_up [n_rows, 2 ffn_dim] ([gate | up] per row), w
// [dim, ffn_dim] (nn.Linear's [out, in]) of `dtype` fp32 (float values) or bf16/fp16 (their
// bits), out [n_rows, dim]. With a 16-bit w, act is rounded to that dtype first (nearest even),
// as matmul_half rounds x (matmul_half.h). A direct loop, double accumulation: equal bit for bit
// to swiglu_reference followed by matmul_reference / matmul_half_reference.
void swiglu_down_reference(float* out, const float* gate_up, const void* w, DType dtype,
                           int n_rows, int dim, int ffn_dim);

}  // namespace llmbench::cpu
