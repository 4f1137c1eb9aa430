// What the tests of the int8/int4 products share (test_quant.cpp: the dispatched kernels, also
// forced portable; test_avx512_emulated.cpp: the SIMDe copy of the AVX-512 kernels): weights
// quantised and packed by the reference routines, and the int8-activation (VNNI) product's fp32
// sum as kernels/cpu/quant.h specifies it, which a kernel must give bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/quant.h"

namespace llmbench::test {

// `rows` x `k` floats quantised to dtype t (int8 or int4) by the reference, row-major blocks.
inline std::vector<std::uint8_t> quantize(const std::vector<float>& v, DType t, int rows, int k) {
  std::vector<std::uint8_t> q(std::size_t(rows * cpu::quant_row_bytes(t, k)));
  cpu::quantize_rows_reference(q.data(), v.data(), t, rows, k);
  return q;
}

// The packed (column-panel) form of row-major blocks: what matmul_quant_vnni reads.
inline std::vector<std::uint8_t> pack(const std::vector<std::uint8_t>& q, DType t, int rows,
                                      int k) {
  std::vector<std::uint8_t> p(q.size());
  cpu::quant_pack_reference(p.data(), q.data(), t, rows, k);
  return p;
}

// `got` (m x n, row-major) against the specified sums of x (m rows of k, stride lda) times the
// packed weights w (n rows of k, dtype t): per output, over the blocks of 32 in order from 0,
// acc = fma(float(I_b) * dx_b, dw_b, acc), I_b the block's exact integer dot product of the
// quantised x and w, dx_b and dw_b their scales. The first output that differs fails the test.
inline void expect_specified_vnni_sums(const std::vector<float>& got, const float* x, int lda,
                                       const std::uint8_t* w, DType t, int m, int n, int k) {
  const int nb = k / 32;
  std::vector<std::int8_t> qx(std::size_t(m) * k), qw(k);
  std::vector<float> dx(std::size_t(m) * nb);
  std::vector<std::uint16_t> dw(nb);
  cpu::quantize_activations(qx.data(), dx.data(), x, m, k, lda);
  for (int j = 0; j < n; ++j) {
    cpu::unpack_packed_row(qw.data(), dw.data(), w, t, n, k, j);
    for (int i = 0; i < m; ++i) {
      float acc = 0.0f;
      for (int b = 0; b < nb; ++b) {
        int dot = 0;
        for (int e = b * 32; e < b * 32 + 32; ++e) dot += qw[e] * qx[std::size_t(i) * k + e];
        acc = std::fma(float(dot) * dx[std::size_t(i) * nb + b], fp16_to_fp32(dw[b]), acc);
      }
      ASSERT_EQ(got[std::size_t(i) * n + j], acc) << n << " " << m << ": " << i << " " << j;
    }
  }
}

}  // namespace llmbench::test
