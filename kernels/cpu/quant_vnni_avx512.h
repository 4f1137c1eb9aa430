// The AVX-512 VNNI kernel of the int8-activation product (matmul_quant_vnni, quant.h), in its
// own file so that only it is compiled with -mavx512vnni; called only when cpu_isa() finds
// AVX512_VNNI. Internal to kernels/cpu: its spec is matmul_quant_vnni_reference.
#pragma once

#include <cstdint>

namespace llmbench::cpu::avx512 {

// out[m, n] = sum over blocks b of dw_b * dx[i, b] * (qw_b . qx_b) for int8 (int4 = false) or
// int4 weight blocks (layout: quant.h), from x already quantised by quantize_activations (qx
// [m, k] int8, dx [m, k / 32]). Two blocks per vpdpbusd (64 bytes): the weights made unsigned
// (int8: q + 128 by flipping the sign bit; int4: the stored nibbles, q + 8), x signed, and the
// offset removed by starting each lane from -offset * (the sum of its four x bytes), which
// depends only on x and is packed with it once per call. Each row's fp32 sum has the same
// order whatever m is.
void matmul_quant_vnni(float* out, const std::int8_t* qx, const float* dx, const void* w,
                       bool int4, int m, int n, int k);

}  // namespace llmbench::cpu::avx512
