// SwiGLU activation: the plain CPU reference, out = silu(gate) * up, parallel over elements,
// and the dispatch to the AVX-512 and AVX2 versions (swiglu.h).
// Deliberately not: fused into the gate/up matmul.
#include "kernels/cpu/swiglu.h"

#include <cmath>
#include <cstddef>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/swiglu_avx2.h"
#include "kernels/cpu/swiglu_avx512.h"

namespace llmbench::cpu {

void swiglu_reference(float* out, const float* gate_up, int n_rows, int ffn_dim) {
  // Collapsed over (row, column) so a single decode row still spreads over the threads.
#pragma omp parallel for collapse(2) if (static_cast<long>(n_rows) * ffn_dim > (1 << 15))
  for (int r = 0; r < n_rows; ++r) {
    for (int i = 0; i < ffn_dim; ++i) {
      const float g = gate_up[static_cast<std::size_t>(r) * 2 * ffn_dim + i];
      const float u = gate_up[static_cast<std::size_t>(r) * 2 * ffn_dim + ffn_dim + i];
      // For very negative g, exp(-g) overflows to inf and silu(g) correctly becomes -0.
      out[static_cast<std::size_t>(r) * ffn_dim + i] = g / (1.0f + std::exp(-g)) * u;
    }
  }
}

void swiglu(float* out, const float* gate_up, int n_rows, int ffn_dim) {
  if (cpu_isa().avx512)
    avx512::swiglu_f32(out, gate_up, n_rows, ffn_dim);
  else if (cpu_isa().avx2)
    avx2::swiglu_f32(out, gate_up, n_rows, ffn_dim);
  else
    swiglu_reference(out, gate_up, n_rows, ffn_dim);
}

}  // namespace llmbench::cpu
