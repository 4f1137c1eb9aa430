// Rotary position embedding (RoPE), Hugging Face "rotate_half" layout: the plain CPU reference.
#pragma once
#include <cstdint>

namespace llmbench::cpu {

// Rotates, in place, n_heads heads of head_dim values in each of n_rows rows.
// Row r starts at x + r * row_stride; head h of that row at + h * head_dim.
// For pair i in [0, head_dim/2): with angle = positions[r] * theta^(-2i/head_dim),
//   a = x[i], b = x[i + head_dim/2]
//   x[i]              = a * cos(angle) - b * sin(angle)
//   x[i + head_dim/2] = b * cos(angle) + a * sin(angle)
// (the layout of Hugging Face's LlamaRotaryEmbedding / apply_rotary_pos_emb).
// The angle is computed in double, then cos/sin rounded to float.
void rope(float* x, int n_rows, int row_stride, int n_heads, int head_dim,
          const int32_t* positions, float theta);

}  // namespace llmbench::cpu
