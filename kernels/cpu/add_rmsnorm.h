// The residual add fused with the RMSNorm that follows it: the plain CPU reference (the spec,
// the composition of the two unfused references) and the fused loop the CPU backend runs.
// Where the decoder uses it (--fuse small, docs/variants.md): attn_residual + ffn_norm, and
// ffn_residual + the next layer's attn_norm.
#pragma once

namespace llmbench::cpu {

// x += residual, then out = rmsnorm(x, weight) (rmsnorm.h), for n_rows rows of dim floats:
// x, residual and out [n_rows, dim] contiguous; weight [dim]. Afterwards x holds the sum (the
// residual stream) and out its normed rows. out must not alias x or residual.
// The spec: cpu::add_inplace over all rows, then cpu::rmsnorm.
void add_rmsnorm_reference(float* x, const float* residual, float* out, const float* weight,
                           int n_rows, int dim, float eps);

// The same, one pass per row while the row is in L1: each sum is added, squared and summed in
// double in the order rmsnorm's loop sums, so the result equals the reference bit for bit.
// Parallel over rows.
void add_rmsnorm(float* x, const float* residual, float* out, const float* weight, int n_rows,
                 int dim, float eps);

}  // namespace llmbench::cpu
