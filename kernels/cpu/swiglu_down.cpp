// SwiGLU into the down projection (see swiglu_down.h): plain loops, slow on purpose.
#include "kernels/cpu/swiglu_down.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/common/error.h"
#include "kernels/common/half.h"

namespace llmbench::cpu {

void swiglu_down_reference(float* out, const float* gate_up, const void* w, DType dtype,
                           int n_rows, int dim, int ffn_dim) {
  if (dtype != DType::kFp32 && dtype != DType::kBf16 && dtype != DType::kFp16)
    throw Error("swiglu_down_reference: weights must be fp32, bf16 or fp16");
  const auto* wf = static_cast<const float*>(w);
  const auto* wh = static_cast<const std::uint16_t*>(w);
  // The weight and activation values the products use, as matmul_half_reference takes them.
  auto weight = [&](std::size_t at) {
    if (dtype == DType::kFp32) return wf[at];
    return dtype == DType::kBf16 ? bf16_to_fp32(wh[at]) : fp16_to_fp32(wh[at]);
  };
  auto round = [dtype](float v) {
    if (dtype == DType::kFp32) return v;
    return dtype == DType::kBf16 ? bf16_to_fp32(fp32_to_bf16(v)) : fp16_to_fp32(fp32_to_fp16(v));
  };
  std::vector<float> act(static_cast<std::size_t>(ffn_dim));
  for (int r = 0; r < n_rows; ++r) {
    const float* g = gate_up + static_cast<std::size_t>(r) * 2 * ffn_dim;
    const float* u = g + ffn_dim;
    // silu(g) * u with std::exp, as swiglu_reference computes it.
    for (int i = 0; i < ffn_dim; ++i) act[i] = round(g[i] / (1.0f + std::exp(-g[i])) * u[i]);
#pragma omp parallel for if (static_cast<long>(dim) * ffn_dim > (1 << 20))
    for (int j = 0; j < dim; ++j) {
      double acc = 0.0;
      for (int i = 0; i < ffn_dim; ++i)
        acc += static_cast<double>(act[i]) * weight(static_cast<std::size_t>(j) * ffn_dim + i);
      out[static_cast<std::size_t>(r) * dim + j] = static_cast<float>(acc);
    }
  }
}

}  // namespace llmbench::cpu
