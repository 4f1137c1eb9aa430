// Per-row argmax (greedy sampling) on the GPU. The spec is kernels/cpu/argmax.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace llmbench::cuda {

// out[r] = argmax_j x[r, j] over the device array x: [n_rows, n_cols]; ties go to the lowest
// index, and a row containing NaN yields the index of its first NaN. out: n_rows device int32s.
// A row of zero columns yields 0, as on the CPU.
void argmax_rows(int32_t* out, const float* x, int n_rows, int n_cols, cudaStream_t stream);

}  // namespace llmbench::cuda
