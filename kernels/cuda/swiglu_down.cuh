// SwiGLU fused into the decode GEMV of the down projection, for bf16/fp16 weights. The spec is
// kernels/cpu/swiglu_down.h (swiglu_down_reference with a 16-bit dtype).
//   out[r, j] = sum_i half(silu(gate[r, i]) * up[r, i]) * w[j, i],   fp32 accumulation,
// where half() rounds to the weight dtype (nearest even) as convert_f32_to_* does before
// gemv_*. One kernel in place of swiglu, the conversion of its output and gemv (three launches a
// layer, and the fp32 act buffer written and read back); the same arithmetic as that sequence,
// so its result equals theirs bit for bit.
// Shapes it takes: those of gemv_half (m <= kGemvRowsMax rows, ffn_dim a multiple of 8) whose
// m x ffn_dim rounded activations fit in one block's shared memory; others run the unfused ops
// (the CUDA backend decides).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace llmbench::cuda {

// Whether swiglu_down_* takes m rows of ffn_dim on the current device.
bool swiglu_down_supported(int m, int ffn_dim);

// gate_up: [m, 2 ffn_dim] fp32 ([gate | up] per row); w: [dim, ffn_dim] contiguous, 16-byte
// aligned; out: [m, dim] fp32. Device pointers. Throws llmbench::Error for a shape that
// swiglu_down_supported refuses.
void swiglu_down_bf16(float* out, const float* gate_up, const __nv_bfloat16* w, int m, int dim,
                      int ffn_dim, cudaStream_t stream);
void swiglu_down_f16(float* out, const float* gate_up, const __half* w, int m, int dim,
                     int ffn_dim, cudaStream_t stream);

}  // namespace llmbench::cuda
