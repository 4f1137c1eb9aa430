// See metric_flags.h.
#include "tools/cli/metric_flags.h"

#include <algorithm>

#include "kernels/common/error.h"
#include "tools/console/flag_values.h"

namespace llmbench {

std::vector<Metric> parse_metrics(const std::string& flag, const std::string& text) {
  std::vector<Metric> out;
  auto add = [&](Metric m) {
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  };
  for (const auto& word : parse_word_list(flag, text)) {
    if (word == "all") {
      for (const auto& info : all_metrics()) add(info.metric);
      continue;
    }
    const auto it = std::find_if(all_metrics().begin(), all_metrics().end(),
                                 [&](const MetricInfo& i) { return word == i.name; });
    if (it == all_metrics().end())
      throw BadInput(flag + ": unknown metric '" + word +
                     "' (expected a comma-separated list of ttft, tpot, e2e, throughput, or all)");
    add(it->metric);
  }
  return out;
}

}  // namespace llmbench
