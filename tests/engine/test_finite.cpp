// The finiteness scan (engine/model/finite.h) and the memory guard's message (engine/model/memory.h), with
// exact expectations: where the first NaN/Inf is, and that every part of a refused case's need
// is printed with its unit (issue 15: "KV cache 0.0000" for a 64 GiB KV cache).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "engine/model/config.h"
#include "engine/model/finite.h"
#include "engine/model/memory.h"
#include "kernels/common/error.h"

namespace llmbench {
namespace {

TEST(Finite, FindsTheFirstNaNOrInfAnywhere) {
  std::vector<float> v(3'000'001, 1.5f);  // above the parallel threshold
  EXPECT_EQ(first_non_finite(v.data(), std::int64_t(v.size())), -1);
  v[2'999'999] = -INFINITY;
  v[2'000'000] = NAN;
  EXPECT_EQ(first_non_finite(v.data(), std::int64_t(v.size())), 2'000'000);
  v[7] = INFINITY;
  EXPECT_EQ(first_non_finite(v.data(), std::int64_t(v.size())), 7);
  // The largest finite values, subnormals and -0 are finite.
  const float edge[] = {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                        std::numeric_limits<float>::denorm_min(), -0.0f};
  EXPECT_EQ(first_non_finite(edge, 4), -1);
  EXPECT_EQ(first_non_finite(v.data(), 0), -1);
  EXPECT_EQ(float_text(NAN), "NaN");
  EXPECT_EQ(float_text(INFINITY), "+Inf");
  EXPECT_EQ(float_text(-INFINITY), "-Inf");
}

std::string refusal(const MemoryEstimate& need, std::int64_t available, std::int64_t resident) {
  try {
    check_fits(need, available, "host", resident);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(MemoryGuard, MessageNamesEveryPartWithItsSize) {
  // llama3-8b fp32, batch 64 x 4096 (+1 new token): weights ~29.9 GiB, KV cache ~64 GiB.
  const ModelConfig* c = find_preset("llama3-8b");
  ASSERT_NE(c, nullptr);
  const MemoryEstimate need = estimate_memory(*c, DType::kFp32, 64, 4096, 4097);
  EXPECT_GT(need.kv_cache_bytes, std::int64_t(60) << 30);
  const std::string msg = refusal(need, std::int64_t(16) << 30, 0);
  EXPECT_NE(msg.find("weights 29.92 GiB, KV cache 64.02 GiB, activations "), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("but 17179869184 bytes (16.00 GiB) are available"), std::string::npos) << msg;
  // Weights already loaded: the case needs its own buffers, and the message says so.
  const std::string more = refusal(need, std::int64_t(16) << 30, need.weight_bytes);
  EXPECT_NE(more.find("more bytes"), std::string::npos) << more;
  EXPECT_NE(more.find("KV cache 64.02 GiB"), std::string::npos) << more;
  EXPECT_NE(more.find("29.92 GiB of weights are already loaded"), std::string::npos) << more;
  // Small parts print in MiB or bytes, never as a zero.
  MemoryEstimate small;
  small.weight_bytes = 3 << 20;
  small.kv_cache_bytes = 5000;
  small.activation_bytes = 0;
  const std::string s = refusal(small, 1000, 0);
  EXPECT_NE(s.find("weights 3.00 MiB, KV cache 5000 bytes, activations 0 bytes"),
            std::string::npos) << s;
  EXPECT_EQ(refusal(small, std::int64_t(1) << 30, 0), "");  // fits: nothing thrown
  EXPECT_EQ(refusal(small, -1, 0), "");                     // unknown: nothing thrown
}

}  // namespace
}  // namespace llmbench
