// The CUPTI op timer's bookkeeping on synthetic activity records (no GPU needed): activities
// reach the op whose external id their API call carried, a leaf reports the sum of its
// kernels, a range spans its descendants, foreign or uncorrelated activity is counted and left
// out, and a Tracer whose timer resolves at the end resolves nothing per step and everything at
// finish(). A replayed CUDA graph's kernels (all of one launch's correlation id) reach the op
// their graph node was captured in, through CUPTI's clone ids too; a node no op was recorded for
// (a stale graph's) is counted and given to no op. The NVTX ranges CUPTI records are checked
// against those the records pushed: count, names and nesting.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "engine/model/activity_attribution.h"
#include "engine/model/cpu_backend.h"
#include "engine/model/graph_ops.h"
#include "engine/model/nvtx_check.h"
#include "engine/model/trace.h"
#include "kernels/common/error.h"

namespace llmbench {

namespace {

// Slots: 0 = step range, 1 = layer range (child of 0), 2 and 3 = ops in 1, 4 = op in 0.
ActivityAttribution three_level(std::uint64_t base) {
  ActivityAttribution a;
  a.set_external_base(base);
  a.add_slot(0, -1);
  a.add_slot(1, 0);
  a.add_slot(2, 1);
  a.add_slot(3, 1);
  a.add_slot(4, 0);
  return a;
}

}  // namespace

TEST(ActivityAttribution, LeavesSumTheirKernelsAndRangesSpanTheirDescendants) {
  ActivityAttribution a = three_level(100);
  // Op 2 launched two kernels (API calls 11, 12) with a 50 ns gap; op 3 one; op 4 a copy.
  a.add_correlation(11, 102);
  a.add_correlation(12, 102);
  a.add_correlation(13, 103);
  a.add_correlation(14, 104);
  a.add_activity({11, 1000, 1100});
  a.add_activity({12, 1150, 1400});
  a.add_activity({13, 1500, 1530});
  a.add_activity({14, 2000, 2600});
  const std::vector<SlotDeviceTime> t = a.resolve();
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(a.unattributed(), 0);
  std::int64_t start = 0, dur = 0;
  ASSERT_TRUE(ActivityAttribution::interval(t[2], start, dur));
  EXPECT_EQ(start, 1000);
  EXPECT_EQ(dur, 100 + 250) << "a leaf's time is its kernels' time, not the gap between them";
  EXPECT_EQ(t[2].activities, 2);
  ASSERT_TRUE(ActivityAttribution::interval(t[3], start, dur));
  EXPECT_EQ(start, 1500);
  EXPECT_EQ(dur, 30);
  ASSERT_TRUE(ActivityAttribution::interval(t[1], start, dur));
  EXPECT_EQ(start, 1000);
  EXPECT_EQ(dur, 530) << "the layer spans its two ops";
  ASSERT_TRUE(ActivityAttribution::interval(t[0], start, dur));
  EXPECT_EQ(start, 1000);
  EXPECT_EQ(dur, 1600) << "the step spans the layer and the copy";
  EXPECT_TRUE(t[0].spans);
  EXPECT_FALSE(t[4].spans);
}

TEST(ActivityAttribution, ARangeWithNothingTracedInsideStillSpansItsKernels) {
  // --trace steps: the step range is the only slot; its kernels are its own, and it reports
  // first start to last end (the gap included), not their sum.
  ActivityAttribution a;
  a.add_slot(0, -1, true);
  a.add_slot(1, -1);  // an op at the root: the sum
  a.add_correlation(1, 0);
  a.add_correlation(2, 0);
  a.add_correlation(3, 1);
  a.add_correlation(4, 1);
  a.add_activity({1, 100, 200});
  a.add_activity({2, 300, 350});
  a.add_activity({3, 400, 410});
  a.add_activity({4, 500, 520});
  const std::vector<SlotDeviceTime> t = a.resolve();
  std::int64_t start = 0, dur = 0;
  ASSERT_TRUE(ActivityAttribution::interval(t[0], start, dur));
  EXPECT_EQ(start, 100);
  EXPECT_EQ(dur, 250);
  ASSERT_TRUE(ActivityAttribution::interval(t[1], start, dur));
  EXPECT_EQ(start, 400);
  EXPECT_EQ(dur, 30);
}

TEST(ActivityAttribution, ForeignAndUncorrelatedActivityIsCountedAndLeftOut) {
  ActivityAttribution a = three_level(100);
  a.add_correlation(1, 103);
  a.add_correlation(2, 99);    // below our base: another timer's op
  a.add_correlation(3, 105);   // past our last slot
  a.add_activity({1, 10, 20});
  a.add_activity({2, 30, 40});
  a.add_activity({3, 50, 60});
  a.add_activity({4, 70, 80});  // an API call made outside every op: no correlation record
  const std::vector<SlotDeviceTime> t = a.resolve();
  EXPECT_EQ(a.unattributed(), 3);
  EXPECT_EQ(t[3].activities, 1);
  EXPECT_EQ(t[3].busy_ns, 10);
  std::int64_t start = -7, dur = -7;
  EXPECT_FALSE(ActivityAttribution::interval(t[4], start, dur)) << "nothing ran for op 4";
  EXPECT_EQ(start, -7);
  ASSERT_TRUE(ActivityAttribution::interval(t[0], start, dur));
  EXPECT_EQ(start, 10);
  EXPECT_EQ(dur, 10);
}

TEST(ActivityAttribution, RecordsMayArriveInAnyOrderAndResolveAgainAfterMore) {
  // Buffers complete out of order: kernels before the correlation records naming their calls.
  ActivityAttribution a = three_level(0);
  a.add_activity({7, 500, 900});
  a.add_correlation(7, 2);
  std::vector<SlotDeviceTime> t = a.resolve();
  EXPECT_EQ(t[2].busy_ns, 400);
  a.add_correlation(8, 4);
  a.add_activity({8, 950, 1000});
  t = a.resolve();
  EXPECT_EQ(t[2].busy_ns, 400) << "resolving again does not count anything twice";
  EXPECT_EQ(t[4].busy_ns, 50);
  EXPECT_EQ(t[0].last_ns, 1000);
  EXPECT_EQ(a.unattributed(), 0);
}

TEST(ActivityAttribution, NegativeDurationsCountAsZeroAndSlotsMustComeInOrder) {
  ActivityAttribution a;
  a.add_slot(0, -1);
  a.add_correlation(1, 0);
  a.add_activity({1, 100, 90});
  EXPECT_EQ(a.resolve()[0].busy_ns, 0);
  EXPECT_THROW(a.add_slot(2, 0), Error);
  EXPECT_THROW(a.add_slot(1, 1), Error);
}

namespace {

// A timer that, like the CUPTI one, only knows its intervals at the end.
class AtEndTimer final : public OpTimer {
 public:
  explicit AtEndTimer(int* resolved) : resolved_(resolved) {}
  bool resolves_at_end() const override { return true; }
  void mark_range(int slot) override { ranges.push_back(slot); }
  void start(int) override {}
  void stop(int) override {}
  void resolve(int slot, std::chrono::steady_clock::time_point, std::int64_t& start_ns,
               std::int64_t& dur_ns) override {
    ++*resolved_;
    start_ns = 10 * slot;
    dur_ns = 5;
  }

  std::vector<int> ranges;

 private:
  int* resolved_;
};

}  // namespace

TEST(ActivityAttribution, TracerResolvesAnAtEndTimerOnlyAtFinish) {
  int resolved = 0;
  auto timer = std::make_unique<AtEndTimer>(&resolved);
  const AtEndTimer* seen = timer.get();
  Tracer tracer(TraceLevel::kOps, std::move(timer), std::chrono::steady_clock::now());
  for (int step = 0; step < 3; ++step) {
    { OpScope s(&tracer, "decode_step", OpCategory::kRange, -1, 0, 0, true);
      OpScope op(&tracer, "matmul", OpCategory::kGemm, 0); }
    tracer.resolve();
  }
  EXPECT_EQ(resolved, 0) << "nothing is read back between steps";
  EXPECT_EQ(seen->ranges, (std::vector<int>{0, 2, 4})) << "the step ranges, not the ops";
  tracer.finish();
  EXPECT_EQ(resolved, 6);
  ASSERT_EQ(tracer.records().size(), 6u);
  EXPECT_EQ(tracer.records()[5].start_ns, 50);
  tracer.finish();
  EXPECT_EQ(resolved, 6) << "finish() resolves each record once";
}

TEST(ActivityAttribution, TheCpuBackendRefusesTheCuptiTimer) {
  CpuBackend be(1);
  EXPECT_THROW(be.make_op_timer(TimerMode::kCupti), BadInput);
  EXPECT_THROW(be.make_op_timer(TimerMode::kEvents), BadInput);
  EXPECT_EQ(parse_timer_mode("events"), TimerMode::kEvents);
  EXPECT_NE(be.make_op_timer(TimerMode::kDevice), nullptr);
  EXPECT_EQ(parse_timer_mode("cupti"), TimerMode::kCupti);
  EXPECT_EQ(timer_mode_name(TimerMode::kCupti), "cupti");
}

}  // namespace llmbench

namespace llmbench {

// Each attributed activity becomes a record of its slot, moved to the tracer's clock and in
// start order; unattributed ones are left out; names are stored once each.
TEST(ActivityAttribution, DeviceWorkListsEachAttributedActivityOfItsSlot) {
  ActivityAttribution a = three_level(100);
  KernelNames names;
  const int gemv = names.intern("gemv_half");
  const int copy = names.intern(memcpy_name(2));
  EXPECT_EQ(names.intern("gemv_half"), gemv) << "a name is stored once";
  EXPECT_EQ(names.intern(nullptr), 2);
  EXPECT_EQ(names.names(), (std::vector<std::string>{"gemv_half", "Memcpy DtoH", "(unnamed)"}));
  a.add_correlation(11, 102);
  a.add_correlation(12, 104);
  DeviceActivity k{11, 5000, 5400, DeviceWorkKind::kKernel, gemv, 0, 7, 0};
  DeviceActivity c{12, 4000, 4100, DeviceWorkKind::kMemcpy, copy, 0, 9, 4096};
  DeviceActivity stray{99, 1000, 2000, DeviceWorkKind::kKernel, gemv, 0, 7, 0};
  a.add_activity(k);
  a.add_activity(c);
  a.add_activity(stray);
  a.resolve();
  const std::vector<DeviceWorkRecord> w = a.device_work(-1000);
  ASSERT_EQ(w.size(), 2u) << "the activity with no correlation record is not listed";
  EXPECT_EQ(w[0].op, 4);
  EXPECT_EQ(w[0].kind, DeviceWorkKind::kMemcpy);
  EXPECT_EQ(w[0].start_ns, 3000);
  EXPECT_EQ(w[0].dur_ns, 100);
  EXPECT_EQ(w[0].bytes, 4096);
  EXPECT_EQ(w[0].stream, 9u);
  EXPECT_EQ(w[0].correlation_id, 12u);
  EXPECT_EQ(w[1].op, 2);
  EXPECT_EQ(w[1].name, gemv);
  EXPECT_EQ(w[1].start_ns, 4000);
  EXPECT_EQ(w[1].dur_ns, 400);
}

TEST(ActivityAttribution, CopiesAreNamedByCuptiCopyKind) {
  EXPECT_STREQ(memcpy_name(1), "Memcpy HtoD");
  EXPECT_STREQ(memcpy_name(2), "Memcpy DtoH");
  EXPECT_STREQ(memcpy_name(8), "Memcpy DtoD");
  EXPECT_STREQ(memcpy_name(9), "Memcpy HtoH");
  EXPECT_STREQ(memcpy_name(10), "Memcpy PtoP");
  EXPECT_STREQ(memcpy_name(3), "Memcpy");
  EXPECT_STREQ(memcpy_name(0), "Memcpy");
}

TEST(Trace, DeviceWorkCategoriesAreTheImportersNames) {
  EXPECT_EQ(device_work_category(DeviceWorkKind::kKernel), "kernel");
  EXPECT_EQ(device_work_category(DeviceWorkKind::kMemcpy), "gpu_memcpy");
  EXPECT_EQ(device_work_category(DeviceWorkKind::kMemset), "gpu_memset");
}

// ---- a replayed graph's kernels --------------------------------------------------------

namespace {

// A captured step's ops: a layer range (0) holding ops a (1) and b (2), then op c (3) outside
// the layer. Nodes 501 and 502 were added while a was innermost, 503 in b, 504 in c, 505 while
// no op was open; `node_base` shifts every id (another capture's nodes).
std::shared_ptr<const GraphOps> captured_ops(std::uint64_t node_base = 500) {
  auto g = std::make_shared<GraphOps>();
  auto op = [&](const char* name, int parent, int depth) {
    OpRecord r;
    r.name = name;
    r.parent = parent;
    r.depth = depth;
    g->ops.push_back(r);
  };
  op("layer", -1, 0);
  op("a", 0, 1);
  op("b", 0, 1);
  op("c", -1, 0);
  g->op_of_node = {{node_base + 1, 1}, {node_base + 2, 1}, {node_base + 3, 2},
                   {node_base + 4, 3}, {node_base + 5, -1}};
  return g;
}

// One replay's slots: `step` the launching range, then the graph's four ops after it.
void add_replay_slots(ActivityAttribution& a, int step) {
  a.add_slot(step, -1, true);
  a.add_slot(step + 1, step, true);
  a.add_slot(step + 2, step + 1);
  a.add_slot(step + 3, step + 1);
  a.add_slot(step + 4, step);
}

DeviceActivity graph_kernel(std::uint32_t corr, std::int64_t start, std::int64_t end,
                            std::uint64_t node) {
  DeviceActivity d{corr, start, end};
  d.graph_node = node;
  return d;
}

}  // namespace

TEST(GraphAttribution, AReplaysKernelsReachTheOpsTheirNodesWereCapturedIn) {
  ActivityAttribution a;
  add_replay_slots(a, 0);
  a.add_graph_launch(0, 1, captured_ops());
  a.add_correlation(50, 0);  // cudaGraphLaunch, inside the step range
  a.add_activity(graph_kernel(50, 1000, 1100, 501));
  a.add_activity(graph_kernel(50, 1150, 1400, 502));
  a.add_activity(graph_kernel(50, 1500, 1530, 503));
  a.add_activity(graph_kernel(50, 2000, 2600, 504));
  a.add_activity(graph_kernel(50, 2700, 2710, 505));  // no op open at capture: the step's own
  a.add_activity(graph_kernel(50, 2800, 2900, 999));  // a node no op was recorded for
  const std::vector<SlotDeviceTime> t = a.resolve();
  EXPECT_EQ(a.unmatched_graph_nodes(), 1) << "counted";
  EXPECT_EQ(a.unattributed(), 0);
  std::int64_t start = 0, dur = 0;
  ASSERT_TRUE(ActivityAttribution::interval(t[2], start, dur));
  EXPECT_EQ(start, 1000);
  EXPECT_EQ(dur, 100 + 250) << "op a: its two nodes' kernels, as an eager op's";
  ASSERT_TRUE(ActivityAttribution::interval(t[3], start, dur));
  EXPECT_EQ(dur, 30);
  ASSERT_TRUE(ActivityAttribution::interval(t[1], start, dur));
  EXPECT_EQ(start, 1000);
  EXPECT_EQ(dur, 530) << "the layer spans its ops";
  ASSERT_TRUE(ActivityAttribution::interval(t[4], start, dur));
  EXPECT_EQ(dur, 600);
  ASSERT_TRUE(ActivityAttribution::interval(t[0], start, dur));
  EXPECT_EQ(dur, 2710 - 1000) << "the step spans its ops and its own node, not the unmatched one";
  EXPECT_EQ(t[0].activities, 1);
  const std::vector<DeviceWorkRecord> w = a.device_work(0);
  ASSERT_EQ(w.size(), 5u) << "the unmatched kernel is no op's child";
  const std::vector<int> want_ops = {2, 2, 3, 4, 0};
  for (std::size_t i = 0; i < w.size(); ++i) EXPECT_EQ(w[i].op, want_ops[i]) << i;
}

TEST(GraphAttribution, TwoReplaysOfOneGraphKeepTheirOwnKernels) {
  // Steps 1 and 2 replay one graph: the same node ids, told apart by their launch's correlation.
  ActivityAttribution a;
  add_replay_slots(a, 0);
  add_replay_slots(a, 5);
  const auto g = captured_ops();
  a.add_graph_launch(0, 1, g);
  a.add_graph_launch(5, 6, g);
  a.add_correlation(50, 0);
  a.add_correlation(60, 5);
  for (std::uint64_t node = 501; node <= 504; ++node) {
    const std::int64_t at = std::int64_t(node - 500) * 100;
    a.add_activity(graph_kernel(60, 10000 + at, 10000 + at + 10, node));  // step 2 first
    a.add_activity(graph_kernel(50, at, at + 10, node));
  }
  const std::vector<SlotDeviceTime> t = a.resolve();
  EXPECT_EQ(a.unmatched_graph_nodes(), 0);
  for (int op = 1; op <= 4; ++op) {
    EXPECT_LT(t[std::size_t(op)].last_ns, 1000) << "step 1's op " << op;
    EXPECT_GE(t[std::size_t(5 + op)].first_ns, 10000) << "step 2's op " << op;
  }
  EXPECT_EQ(t[2].activities, 2);
  EXPECT_EQ(t[7].activities, 2);
  EXPECT_THROW(a.add_graph_launch(5, 6, g), Error) << "one launch per slot";
}

TEST(GraphAttribution, CloneIdsTakeTheirOriginalsOp) {
  // CUPTI names a replay's nodes by the executable graph's copies of the captured ones.
  ActivityAttribution a;
  add_replay_slots(a, 0);
  a.add_graph_launch(0, 1, captured_ops());
  a.add_node_clone(503, 9003);
  a.add_correlation(50, 0);
  a.add_activity(graph_kernel(50, 100, 150, 9003));
  a.add_activity(graph_kernel(50, 200, 250, 9004));  // a clone nobody reported
  const std::vector<SlotDeviceTime> t = a.resolve();
  EXPECT_EQ(t[3].activities, 1) << "op b";
  EXPECT_EQ(a.unmatched_graph_nodes(), 1);
}

TEST(GraphAttribution, AStaleGraphsNodesAreUnmatchedInTheNewGraphsLaunch) {
  // The shape was captured again (a buffer moved): the replay launches the new graph, whose
  // nodes are 601.., so records naming the old graph's nodes belong to no op of it.
  ActivityAttribution a;
  add_replay_slots(a, 0);
  a.add_graph_launch(0, 1, captured_ops(600));
  a.add_correlation(50, 0);
  a.add_activity(graph_kernel(50, 100, 150, 501));
  a.add_activity(graph_kernel(50, 200, 250, 503));
  a.add_activity(graph_kernel(50, 300, 350, 603));
  const std::vector<SlotDeviceTime> t = a.resolve();
  EXPECT_EQ(a.unmatched_graph_nodes(), 2);
  EXPECT_EQ(t[2].activities, 0) << "not misattributed to op a";
  EXPECT_EQ(t[3].activities, 1);
  EXPECT_EQ(a.device_work(0).size(), 1u);
}

// ---- NVTX ranges through CUPTI's marker records ----------------------------------------

namespace {

// decode_step > layer > (a, then a replayed op that pushed nothing), then b in the step.
std::vector<OpRecord> pushed_records() {
  std::vector<OpRecord> r(5);
  const char* names[] = {"decode_step", "layer", "a", "replayed", "b"};
  const int depth[] = {0, 1, 2, 2, 1};
  for (int i = 0; i < 5; ++i) {
    r[std::size_t(i)].name = names[i];
    r[std::size_t(i)].depth = depth[i];
  }
  r[3].replayed = true;
  return r;
}

NvtxMarker mark(std::uint32_t id, bool start, std::int64_t ts, const char* name = "") {
  return {id, start, ts, name, start};
}

}  // namespace

TEST(NvtxCheck, RangesRecordedAsPushedMatchWhateverTheRecordOrder) {
  // Markers in delivery order (not time order); the layer starts at the step's instant and the
  // step and b end at one instant; another domain's end is ignored.
  std::vector<NvtxMarker> m = {mark(4, true, 50, "b"),     mark(1, true, 10, "decode_step"),
                               mark(2, true, 10, "layer"), mark(3, true, 20, "a"),
                               mark(3, false, 30),         mark(2, false, 40),
                               mark(4, false, 60),         mark(1, false, 60),
                               {99, false, 70, "", false}};
  const NvtxCheck c = check_nvtx(pushed_records(), m);
  EXPECT_TRUE(c.ok()) << c.summary();
  EXPECT_EQ(c.pushed, 4) << "the replayed op pushed none";
  EXPECT_EQ(c.recorded, 4);
  EXPECT_EQ(c.summary(), "nvtx: CUPTI recorded 4 ranges of the 4 llmbench pushed, names and "
                         "nesting equal");
}

TEST(NvtxCheck, AMissingRangeAnOtherNestingAndAnUnpairedStartAreReported) {
  // b recorded inside the layer (depth 2), a never recorded, and one start without its end.
  std::vector<NvtxMarker> m = {mark(1, true, 10, "decode_step"), mark(2, true, 11, "layer"),
                               mark(4, true, 20, "b"),           mark(4, false, 30),
                               mark(2, false, 40),               mark(1, false, 50),
                               mark(7, true, 60, "stray")};
  const NvtxCheck c = check_nvtx(pushed_records(), m);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.recorded, 3);
  EXPECT_EQ(c.unpaired, 1);
  const std::string s = c.summary();
  EXPECT_NE(s.find("1 starts or ends unpaired"), std::string::npos) << s;
  EXPECT_NE(s.find("pushed 'a' at depth 2, recorded 'b' at depth 2"), std::string::npos) << s;
  EXPECT_NE(s.find("'b' was not recorded"), std::string::npos) << s;
  EXPECT_TRUE(check_nvtx(pushed_records(), {}).differences.size() > 0);
}

}  // namespace llmbench
