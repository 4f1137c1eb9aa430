// check_nvtx (see nvtx_check.h).
#include "engine/model/nvtx_check.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace llmbench {

namespace {

constexpr std::size_t kMaxDifferences = 5;

struct Range {
  std::uint32_t id;
  std::int64_t start_ns, end_ns;
  std::string name;
  int depth = -1;
};

}  // namespace

NvtxCheck check_nvtx(const std::vector<OpRecord>& records, const std::vector<NvtxMarker>& markers) {
  NvtxCheck c;
  auto differ = [&](std::string what) {
    if (c.differences.size() < kMaxDifferences) c.differences.push_back(std::move(what));
  };
  // Pair each llmbench start with its end.
  std::vector<Range> ranges;
  std::unordered_map<std::uint32_t, std::size_t> open;
  for (const NvtxMarker& m : markers)
    if (m.start && m.in_domain) {
      open[m.id] = ranges.size();
      ranges.push_back({m.id, m.ts_ns, -1, m.name});
    }
  for (const NvtxMarker& m : markers) {
    if (m.start) continue;
    const auto it = open.find(m.id);
    if (it == open.end()) {
      c.unpaired += m.in_domain ? 1 : 0;  // an end of no llmbench range names its own domain
      continue;
    }
    ranges[it->second].end_ns = m.ts_ns;
    open.erase(it);
  }
  c.unpaired += int(open.size());
  ranges.erase(std::remove_if(ranges.begin(), ranges.end(),
                              [](const Range& r) { return r.end_ns < 0; }),
               ranges.end());
  c.recorded = int(ranges.size());

  // Depth by time: walk starts and ends in order; at one instant ends first, the range opened
  // later ending first, and starts in the order they were opened (ids grow with each push).
  struct Edge {
    std::int64_t ts;
    bool start;
    std::size_t range;
  };
  std::vector<Edge> edges;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    edges.push_back({ranges[i].start_ns, true, i});
    edges.push_back({ranges[i].end_ns, false, i});
  }
  std::sort(edges.begin(), edges.end(), [&](const Edge& a, const Edge& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.start != b.start) return !a.start;
    const std::uint32_t ia = ranges[a.range].id, ib = ranges[b.range].id;
    return a.start ? ia < ib : ia > ib;
  });
  std::vector<std::size_t> stack, order;
  for (const Edge& e : edges) {
    if (e.start) {
      ranges[e.range].depth = int(stack.size());
      stack.push_back(e.range);
      order.push_back(e.range);
      continue;
    }
    const auto it = std::find(stack.begin(), stack.end(), e.range);
    if (it != stack.end() - 1 && it != stack.end())
      differ("recorded range '" + ranges[e.range].name + "' ended before one it encloses");
    if (it != stack.end()) stack.erase(it);
  }

  // Compare with what was pushed, in order.
  std::size_t k = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const OpRecord& r = records[i];
    if (r.replayed) continue;
    ++c.pushed;
    if (k >= order.size()) {
      differ("pushed range " + std::to_string(i) + " '" + r.name + "' was not recorded");
      continue;
    }
    const Range& got = ranges[order[k++]];
    if (got.name != r.name || got.depth != r.depth)
      differ("range " + std::to_string(k - 1) + ": pushed '" + r.name + "' at depth " +
             std::to_string(r.depth) + ", recorded '" + got.name + "' at depth " +
             std::to_string(got.depth));
  }
  if (k < order.size())
    differ(std::to_string(order.size() - k) + " recorded ranges more than pushed, from '" +
           ranges[order[k]].name + "'");
  return c;
}

std::string NvtxCheck::summary() const {
  std::string s = "nvtx: CUPTI recorded " + std::to_string(recorded) + " ranges of the " +
                  std::to_string(pushed) + " llmbench pushed";
  if (ok()) return s + ", names and nesting equal";
  if (unpaired > 0) s += "; " + std::to_string(unpaired) + " starts or ends unpaired";
  for (const std::string& d : differences) s += "; " + d;
  return s;
}

}  // namespace llmbench
