// Matrix multiply against a weight matrix stored as [out_features, in_features] (the
// PyTorch/Hugging Face nn.Linear layout): out[m, n] = sum_k x[m, k] * w[n, k].
// matmul_reference is the spec: plain loops, double accumulation, slow on purpose.
// matmul is the version the engine uses: OpenBLAS sgemv for one row (decode at batch 1, where
// sgemv streams the weights much faster than sgemm), sgemm otherwise.
#pragma once

namespace llmbench::cpu {

// x: [m, k] with row stride lda (>= k); w: [n, k] contiguous; out: [m, n] contiguous.
void matmul_reference(float* out, const float* x, const float* w, int m, int n, int k, int lda);
void matmul(float* out, const float* x, const float* w, int m, int n, int k, int lda);

}  // namespace llmbench::cpu
