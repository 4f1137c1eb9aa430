// Strided head copy: the plain CPU reference. One memcpy of head_dim floats per (b, t, h), in
// parallel when the copy is large. A real copy with real memory traffic: the point of the
// permute and concat variants is to pay for it, so nothing here avoids it.
#include "kernels/cpu/copy_heads.h"

#include <cstddef>
#include <cstring>

namespace llmbench::cpu {

void copy_heads(float* out, const HeadStrides& out_strides, const float* in,
                const HeadStrides& in_strides, int batch, int seq, int heads, int head_dim) {
  const std::size_t bytes = static_cast<std::size_t>(head_dim) * sizeof(float);
  const long floats = static_cast<long>(batch) * seq * heads * head_dim;
#pragma omp parallel for collapse(3) if (floats > (1 << 16))
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < seq; ++t) {
      for (int h = 0; h < heads; ++h) {
        std::memcpy(out + b * out_strides.batch + t * out_strides.seq + h * out_strides.head,
                    in + b * in_strides.batch + t * in_strides.seq + h * in_strides.head, bytes);
      }
    }
  }
}

}  // namespace llmbench::cpu
