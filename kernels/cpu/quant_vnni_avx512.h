// The AVX-512 VNNI kernel of the int8-activation product (matmul_quant_vnni, quant.h), in its
// own file so that only it is compiled with -mavx512vnni; called only when cpu_isa() finds
// AVX512_VNNI. Internal to kernels/cpu: its spec is matmul_quant_vnni_reference.
#pragma once
#include "kernels/cpu/avx512_namespace.h"

#include <cstdint>

namespace llmbench::cpu::LLMBENCH_AVX512_NS {

// out[m, n] = for each output the fp32 sum over blocks b in order of
// fma(float(qw_b . qx_b) * dx[i, b], dw_b, acc) (quant.h) for int8 (int4 = false) or int4
// weights in the packed column-panel layout (quant.h, quantize_packed), from x already
// quantised by quantize_activations (qx [m, k] int8, dx [m, k / 32]). Row i of out does not
// depend on m.
void matmul_quant_vnni(float* out, const std::int8_t* qx, const float* dx, const void* w,
                       bool int4, int m, int n, int k);

}  // namespace llmbench::cpu::LLMBENCH_AVX512_NS
