// The importers' building blocks without the CLI: nesting of slices per track (depth, parent,
// overlap tracks), the lookups flow binding uses, microseconds to ns as trace processor
// converts them, API names without their version suffix, Chrome ts text for the exporter.
#include <gtest/gtest.h>

#include "tools/trace_io/export_chrome.h"
#include "tools/trace_io/import_chrome.h"
#include "tools/trace_io/import_nsys.h"
#include "tools/store/trace_nesting.h"

namespace llmbench {
namespace {

ImportedTrace one_track() {
  ImportedTrace t;
  t.tracks.push_back({"main", "thread", {}, {}, {}, {}});
  return t;
}

TEST(ImportNesting, DepthAndParentsFollowContainment) {
  ImportedTrace t = one_track();
  // Added out of order on purpose: nesting sorts by start, longer first on ties.
  t.add_slice(10, 5, 0, "", "child_b");       // 0: [10, 15)
  t.add_slice(0, 100, 0, "", "root");         // 1: [0, 100)
  t.add_slice(0, 20, 0, "", "child_a");       // 2: [0, 20) same start as root, shorter
  t.add_slice(20, 0, 0, "", "instant_at_end"); // 3: at child_a's end: a sibling, not a child
  t.add_slice(100, 1, 0, "", "next_root");    // 4: starts where root ends
  TrackIndex index(t);
  const auto& s = t.slices;
  EXPECT_EQ(s[1].depth, 0);
  EXPECT_EQ(s[1].parent, kNoParent);
  EXPECT_EQ(s[2].depth, 1);
  EXPECT_EQ(s[2].parent, 1);
  EXPECT_EQ(s[0].depth, 2);
  EXPECT_EQ(s[0].parent, 2);
  EXPECT_EQ(s[3].depth, 1);
  EXPECT_EQ(s[3].parent, 1);
  EXPECT_EQ(s[4].depth, 0);
  EXPECT_TRUE(t.notes.empty());
  // Parents are written before their children.
  std::vector<std::size_t> pos(s.size());
  for (std::size_t i = 0; i < index.write_order().size(); ++i) pos[index.write_order()[i]] = i;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i].parent == kNoParent) continue;
    EXPECT_LT(pos[std::size_t(s[i].parent)], pos[i]) << i;
  }
}

TEST(ImportNesting, PartialOverlapsMoveToOverlapTracks) {
  ImportedTrace t = one_track();
  t.add_slice(0, 10, 0, "", "a");   // [0, 10)
  t.add_slice(5, 10, 0, "", "b");   // [5, 15): overlaps a partially
  t.add_slice(6, 2, 0, "", "c");    // [6, 8): fits inside a
  t.add_slice(12, 1, 0, "", "d");   // [12, 13): after a, inside b's time
  TrackIndex index(t);
  ASSERT_EQ(t.tracks.size(), 2u);
  EXPECT_EQ(t.tracks[1].name, "main (overlap 1)");
  EXPECT_EQ(t.slices[1].track, 1u);
  EXPECT_EQ(t.slices[2].track, 0u);
  EXPECT_EQ(t.slices[2].parent, 0);
  EXPECT_EQ(t.slices[3].track, 0u);  // lane 0 is free again
  EXPECT_EQ(t.slices[3].depth, 0);
  EXPECT_EQ(t.notes.begin()->second, 1);
  // Lookups search the track and its overlap tracks: the innermost enclosing slice.
  EXPECT_EQ(index.enclosing(t, 0, 7), std::optional<std::size_t>(2));   // c inside a
  EXPECT_EQ(index.enclosing(t, 0, 11), std::optional<std::size_t>(1));  // only b
  EXPECT_EQ(index.enclosing(t, 0, 20), std::nullopt);
  EXPECT_EQ(index.next_at_or_after(t, 0, 9), std::optional<std::size_t>(3));
  EXPECT_EQ(index.next_at_or_after(t, 0, 13), std::nullopt);
}

TEST(ImportNesting, EnclosingPrefersTheDeepestAndHandlesInstants) {
  ImportedTrace t = one_track();
  t.add_slice(0, 100, 0, "", "root");
  t.add_slice(10, 10, 0, "", "launch");
  t.add_slice(50, 0, 0, "", "instant");
  TrackIndex index(t);
  EXPECT_EQ(index.enclosing(t, 0, 10), std::optional<std::size_t>(1));
  EXPECT_EQ(index.enclosing(t, 0, 20), std::optional<std::size_t>(0));  // end is exclusive
  EXPECT_EQ(index.enclosing(t, 0, 50), std::optional<std::size_t>(2));
}

TEST(ImportChromeUnits, MicrosecondsBecomeRoundedNanoseconds) {
  using nlohmann::json;
  EXPECT_EQ(chrome_us_to_ns(json(42)), 42000);
  EXPECT_EQ(chrome_us_to_ns(json(42.1)), 42100);
  EXPECT_EQ(chrome_us_to_ns(json(1.0004)), 1000);
  EXPECT_EQ(chrome_us_to_ns(json(1.0006)), 1001);
  EXPECT_EQ(chrome_us_to_ns(json(-2.5)), -2500);
  EXPECT_EQ(chrome_us_to_ns(json("12.5")), 12500);
  EXPECT_EQ(chrome_us_to_ns(json(1700000000000000LL)), 1700000000000000000LL);
  EXPECT_FALSE(chrome_us_to_ns(json("12x")));
  EXPECT_FALSE(chrome_us_to_ns(json(nullptr)));
  EXPECT_FALSE(chrome_us_to_ns(json(1e300)));
  EXPECT_FALSE(chrome_us_to_ns(json::array()));
}

TEST(ImportChromeUnits, ExportedTimesAreExactMicrosecondText) {
  EXPECT_EQ(ns_to_us_text(0), "0.000");
  EXPECT_EQ(ns_to_us_text(1234567), "1234.567");
  EXPECT_EQ(ns_to_us_text(5), "0.005");
  EXPECT_EQ(ns_to_us_text(-1500), "-1.500");
  for (long long ns : {1LL, 999LL, 123456789012LL, 98765432109876LL})
    EXPECT_EQ(chrome_us_to_ns(nlohmann::json::parse(ns_to_us_text(ns))), ns);
}

TEST(ImportNsysUnits, ApiNamesLoseTheirVersionSuffix) {
  EXPECT_EQ(strip_api_version("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(strip_api_version("cudaMemcpyAsync_v3020"), "cudaMemcpyAsync");
  EXPECT_EQ(strip_api_version("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(strip_api_version("my_v2_kernel"), "my_v2_kernel");
  EXPECT_EQ(strip_api_version("trailing_v"), "trailing_v");
  EXPECT_EQ(strip_api_version("_v12"), "_v12");
}

}  // namespace
}  // namespace llmbench
