// Finiteness scans: a NaN or Inf in the weights or the logits makes every greedy token 0 and
// the case look fine (status ok, exit 0). Weights are scanned once as they are loaded or built
// (a vectorised pass, a few ms per 100 MB); logits once per case, after its measured
// repetitions, and only when they are not finite does a checked rerun look for the first op
// whose output is not (Session::set_check_ops). Not a numerical-accuracy check.
#pragma once
#include <cstdint>
#include <string>

namespace llmbench {

// Index of the first NaN or +-Inf among `n` floats; -1 when every one is finite.
std::int64_t first_non_finite(const float* values, std::int64_t n);

// "NaN", "+Inf" or "-Inf" (for messages; finite values print as numbers).
std::string float_text(float v);

}  // namespace llmbench
