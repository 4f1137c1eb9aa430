// SwiGLU activation: the plain CPU reference.
#pragma once

namespace llmbench::cpu {

// gate_up: [n_rows, 2 * ffn_dim], each row = [gate (ffn_dim) | up (ffn_dim)].
// out:     [n_rows, ffn_dim],     out[r, i] = silu(gate[r, i]) * up[r, i],
// silu(g) = g / (1 + exp(-g)).
void swiglu(float* out, const float* gate_up, int n_rows, int ffn_dim);

}  // namespace llmbench::cpu
