// Copying a [batch, seq, heads, head_dim] tensor between two layouts: the plain CPU reference.
// The engine's permute ops (--qkv permute: q, k and v into head-major layout and the attention
// output back), KV writes into a head-major cache, and the --kv-cache concat copies are all
// this one op with different strides.
#pragma once
#include "kernels/common/layout.h"

namespace llmbench::cpu {

// out(b, t, h, :) = in(b, t, h, :) for b < batch, t < seq, h < heads: head_dim floats each,
// each side at its own strides (head_layout.h). out and in must not overlap.
void copy_heads(float* out, const HeadStrides& out_strides, const float* in,
                const HeadStrides& in_strides, int batch, int seq, int heads, int head_dim);

}  // namespace llmbench::cpu
