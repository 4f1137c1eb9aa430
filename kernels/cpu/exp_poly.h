// The constants of e^x shared by every vector width (exp_avx2.h, exp_avx512.h): Cody-Waite
// reduction x = n ln2 + r with ln2 split in two, then a degree-7 Horner polynomial in r (the
// Taylor coefficients 1/7! ... 1/0!). Written once so that the AVX2 and AVX-512 kernels
// (SwiGLU, attention's softmax) compute the same sums. Internal to kernels/cpu.
// Deliberately not: the 2^n step, which differs by width (vscalefps against two multiplies).
#pragma once

namespace llmbench::cpu::exp_poly {

inline constexpr float kLog2e = 1.44269504088896341f;
// ln2 = kLn2Hi + kLn2Lo; kLn2Hi has 9 significant bits, so n * kLn2Hi is exact for |n| < 2^15.
inline constexpr float kLn2Hi = 0.693145751953125f;
inline constexpr float kLn2Lo = 1.42860682030941723212e-6f;
// Horner order, highest power first: p = ((1/7! r + 1/6!) r + ... + 1/1!) r + 1/0!.
inline constexpr int kTerms = 8;
inline constexpr float kHorner[kTerms] = {1.0f / 5040.0f, 1.0f / 720.0f, 1.0f / 120.0f,
                                          1.0f / 24.0f,   1.0f / 6.0f,   0.5f,
                                          1.0f,           1.0f};
// Softmax numerators e^(s - max) are clamped here: e^-87 ~ 1.6e-38, negligible in the sum.
inline constexpr float kSoftmaxFloor = -87.0f;

}  // namespace llmbench::cpu::exp_poly
