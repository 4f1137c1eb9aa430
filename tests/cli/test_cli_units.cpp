// Pieces of the subcommands that need no process: the --metric words of compare and
// export gbench (tools/cli/metric_flags.h).
#include <gtest/gtest.h>

#include "kernels/common/error.h"
#include "tools/cli/metric_flags.h"

namespace llmbench {
namespace {

TEST(MetricFlags, ParsesMetricLists) {
  EXPECT_EQ(parse_metrics("--metric", "tpot,ttft"), (std::vector<Metric>{Metric::kTpot, Metric::kTtft}));
  EXPECT_EQ(parse_metrics("--metric", "e2e,e2e"), (std::vector<Metric>{Metric::kE2e}));
  EXPECT_EQ(parse_metrics("--metric", "all").size(), 4u);
  EXPECT_EQ(parse_metrics("--metric", "throughput,all").front(), Metric::kThroughput);
  EXPECT_THROW(parse_metrics("--metric", "latency"), BadInput);
  EXPECT_THROW(parse_metrics("--metric", ""), BadInput);
  EXPECT_THROW(parse_metrics("--metric", "ttft,"), BadInput);
}

}  // namespace
}  // namespace llmbench
