// PanelSchedule (kernels/cpu/panel_schedule.h): every unit claimed exactly once, each thread
// walking its own share forward and then the back halves of what others have left, in a
// single-thread replay that fixes the interleaving, and under real OpenMP teams of any size.
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <vector>

#include "kernels/cpu/panel_schedule.h"

namespace llmbench::cpu {
namespace {

std::vector<int> walk(PanelSchedule& s, int self) {
  std::vector<int> got;
  s.run(self, [&](int u) { got.push_back(u); });
  return got;
}

TEST(PanelSchedule, AThreadAloneWalksItsShareThenHalvesOfTheOthersForward) {
  // Thread 1 of two runs before thread 0 starts: its share [5, 10), then the back half of
  // what is left of share 0 each time: [2, 5) (the larger half of five), [1, 2), [0, 1).
  PanelSchedule s(10, 2);
  EXPECT_EQ(walk(s, 1), (std::vector<int>{5, 6, 7, 8, 9, 2, 3, 4, 1, 0}));
  EXPECT_TRUE(walk(s, 0).empty());
}

TEST(PanelSchedule, AThiefLeavesTheUnitItsOwnerHoldsAndWalksEachPieceForward) {
  // Thread 0 holds unit 1 of [0, 8) when thread 1 runs to its end: its own [8, 16), then
  // [5, 8) (the back half of the unclaimed [2, 8)), [3, 5), [2, 3); thread 0 then finds its
  // share empty and nothing else left.
  PanelSchedule s(16, 2);
  std::vector<int> zero, one;
  s.run(0, [&](int u) {
    zero.push_back(u);
    if (u == 1) one = walk(s, 1);
  });
  EXPECT_EQ(zero, (std::vector<int>{0, 1}));
  EXPECT_EQ(one, (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15, 5, 6, 7, 3, 4, 2}));
}

TEST(PanelSchedule, OneShareOrNoUnits) {
  PanelSchedule one(3, 1);
  EXPECT_EQ(walk(one, 0), (std::vector<int>{0, 1, 2}));
  PanelSchedule none(0, 4);
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(walk(none, t).empty());
  PanelSchedule past(4, 2);  // a thread numbered past the shares takes nothing
  EXPECT_TRUE(walk(past, 2).empty());
  EXPECT_EQ(walk(past, 0), (std::vector<int>{0, 1, 3, 2}));
}

TEST(PanelSchedule, EveryUnitOnceUnderRealTeams) {
  // Teams of 1-4 threads over 1-4 shares (a team smaller than the shares leaves some to be
  // taken whole by the others), units fewer than, equal to and many more than the threads;
  // thread 0 slowed so that the others steal from it.
  for (int shares = 1; shares <= 4; ++shares)
    for (int team = 1; team <= shares; ++team)
      for (int n : {1, 3, 4, 97, 1000}) {
        SCOPED_TRACE(testing::Message() << "shares=" << shares << " team=" << team << " n=" << n);
        std::vector<std::atomic<int>> count(static_cast<std::size_t>(n));
        PanelSchedule s(n, shares);
#pragma omp parallel num_threads(team)
        {
          const int self = omp_get_thread_num();
          s.run(self, [&](int u) {
            if (self == 0) {
              volatile int spin = 0;
              for (int i = 0; i < 2000; ++i) spin = spin + i;
            }
            count[static_cast<std::size_t>(u)].fetch_add(1);
          });
        }
        for (int u = 0; u < n; ++u) ASSERT_EQ(count[static_cast<std::size_t>(u)].load(), 1) << u;
      }
}

}  // namespace
}  // namespace llmbench::cpu
