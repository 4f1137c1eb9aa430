// Copying a [batch, seq, heads, head_dim] tensor between two layouts on the GPU (the permute,
// head-major KV write and concat copies). The spec is kernels/cpu/copy_heads.h.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/common/layout.h"

namespace llmbench::cuda {


// out(b, t, h, :) = in(b, t, h, :), head_dim floats each, each side at its own strides.
// Device pointers; out and in must not overlap.
void copy_heads(float* out, const HeadStrides& out_strides, const float* in,
                const HeadStrides& in_strides, int batch, int seq, int heads, int head_dim,
                cudaStream_t stream);

}  // namespace llmbench::cuda
