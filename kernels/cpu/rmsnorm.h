// RMSNorm: the plain CPU reference.
#pragma once

namespace llmbench::cpu {

// For each row r: out[r, i] = x[r, i] / sqrt(mean_j(x[r, j]^2) + eps) * weight[i].
// out and x: [n_rows, dim] contiguous (out may alias x); weight: [dim].
// The mean of squares is accumulated in double so the result does not depend on thread count.
void rmsnorm(float* out, const float* x, const float* weight, int n_rows, int dim, float eps);

}  // namespace llmbench::cpu
