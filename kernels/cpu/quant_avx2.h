// AVX2 kernel for the int8-activation product on packed int8/int4 weights (quant_avx2.cpp,
// compiled with -mavx2 -mfma -mf16c; called only when cpu_isa() says the CPU has AVX2 and no
// AVX512_VNNI). Internal to kernels/cpu: the public op is matmul_quant_vnni() (quant.h), whose
// spec and fp32 formula this kernel follows bit for bit, like the AVX-512 one.
//
// Without vpdpbusd, each 32-byte half of a packed 64-byte vector (4 k values of 8 columns) is
// multiplied with vpmaddubsw (unsigned x signed bytes, pairs summed to int16) then vpmaddwd
// with ones (pairs of int16 to int32): the 4-product sum of every column in one int32 lane.
//   int8: the stored bytes are q + 128; vpmaddubsw of them would overflow int16, so q is
//         restored (xor 0x80) and the sign moved onto x (|q| times sign(q) x: at most
//         2 * 127 * 127 per pair), which also makes the block's sum exact without a correction;
//   int4: the nibbles q + 8 are at most 15, so they go in as stored and the block's sum is
//         corrected by -8 * sum(qx), computed once per call.
// Then per block, exactly as quant.h specifies: acc = fma(float(I) * dx, dw, acc).
// Only full column groups (16 columns); the caller runs a last partial group another way.
#pragma once
#include <cstdint>

namespace llmbench::cpu::avx2 {

// out[:, 0 .. 16 * (n / 16)) of matmul_quant_vnni (out rows n apart) from x quantised to qx
// [m, k] and dx [m, k / 32], w packed (quant.h) with n rows (output columns).
void matmul_quant_vnni(float* out, const std::int8_t* qx, const float* dx, const void* w,
                       bool int4, int m, int n, int k);

}  // namespace llmbench::cpu::avx2
