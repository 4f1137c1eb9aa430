// StepGraphs (engine/model/cuda_graph.h) driven by a fake GraphDriver: launches are closures on
// a fake stream, run at once or recorded while capturing, and a replay runs the recorded ones.
// Each step's work reads its input from "device memory" (a variable the test updates in place
// before the step, as Session uploads positions), so a replay that froze an input would give a
// wrong output here just as a stale length would give wrong tokens on a GPU. Checked: warm-up,
// capture on first use after it, replays, a graph per shape, re-capture when a buffer moves,
// and every way a capture can fail falling back to eager steps with one note, each step's work
// done exactly once. Then the whole decode path of a Session with --cuda-graphs on, through
// a CPU backend whose ops are recorded as closures while capturing (arguments frozen at record
// time, as a CUDA graph freezes kernel parameters): replays must give the eager tokens and
// logits bit for bit, and the same backend with one op that takes the length by value at
// record time must not (so the check can fail). Traced steps: the capture learns each node's
// op, every launch of the graph records those ops in the step's Tracer, a failed traced capture
// leaves no record behind, and a traced Session's replayed steps record the eager steps' ops.
// The CUDA driver itself is checked on a device (tests/cuda/test_cuda_forward.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/bench/prompts.h"
#include "engine/model/cpu_backend.h"
#include "engine/model/cuda_graph.h"
#include "engine/model/graph_ops.h"
#include "engine/model/model.h"
#include "kernels/common/error.h"
#include "tests/engine/generation.h"

namespace llmbench {
namespace {

struct FakeGraph final : GraphExec {
  std::vector<std::function<void()>> work;
};

class FakeDriver final : public GraphDriver {
 public:
  // What the next capture does wrong, if anything.
  bool refuse_begin = false, refuse_instantiate = false;
  std::uint64_t epoch = 0;
  int begins = 0, ends = 0, aborts = 0, graph_launches = 0;

  // A launch on the fake stream: run now, or recorded while capturing.
  void enqueue(std::function<void()> work) {
    if (recording_)
      recording_->push_back(std::move(work));
    else
      work();
  }
  bool recording() const { return recording_ != nullptr; }

  void begin_capture() override {
    ++begins;
    if (refuse_begin) throw Error("begin refused");
    recording_ = std::make_unique<std::vector<std::function<void()>>>();
    named_ = 0;
  }
  // Node ids: 1000 x the capture's number + the launch's index in it.
  std::vector<std::uint64_t> new_nodes() override {
    std::vector<std::uint64_t> out;
    for (; recording_ && named_ < recording_->size(); ++named_)
      out.push_back(std::uint64_t(begins) * 1000 + named_);
    return out;
  }
  std::unique_ptr<GraphExec> end_capture() override {
    ++ends;
    auto recorded = std::move(recording_);
    if (refuse_instantiate) throw Error("instantiate refused");
    auto g = std::make_unique<FakeGraph>();
    g->work = std::move(*recorded);
    return g;
  }
  void abort_capture() noexcept override {
    ++aborts;
    recording_.reset();
  }
  void launch(GraphExec& graph) override {
    ++graph_launches;
    for (auto& w : static_cast<FakeGraph&>(graph).work) w();
  }
  std::uint64_t buffer_epoch() const override { return epoch; }

 private:
  std::unique_ptr<std::vector<std::function<void()>>> recording_;
  std::size_t named_ = 0;
};

// A timer that sees graph nodes as the CUPTI one does: every graph launch it is handed is
// kept for the test (host times are not what these tests check).
struct SeenLaunch {
  int launch_slot = -1, first = -1;
  std::shared_ptr<const GraphOps> ops;
};
class GraphSeeingTimer final : public OpTimer {
 public:
  explicit GraphSeeingTimer(std::vector<SeenLaunch>& seen) : seen_(seen) {}
  bool sees_graph_nodes() const override { return true; }
  void start(int) override {}
  void stop(int) override {}
  void resolve(int, std::chrono::steady_clock::time_point, std::int64_t& start_ns,
               std::int64_t& dur_ns) override {
    start_ns = dur_ns = 0;
  }
  void graph_launch(int launch_slot, int first, std::shared_ptr<const GraphOps> ops,
                    const std::function<void()>& launch) override {
    seen_.push_back({launch_slot, first, std::move(ops)});
    launch();
  }

 private:
  std::vector<SeenLaunch>& seen_;
};

std::vector<std::string> names_of(const std::vector<OpRecord>& records) {
  std::vector<std::string> out;
  for (const OpRecord& r : records) out.push_back(r.name);
  return out;
}

// A decode-like step: two launches that read the step's input from "device memory" and write
// one output each.
struct FakeStep {
  FakeDriver& driver;
  int device_len = 0;            // updated in place before each step
  std::vector<int> out;          // what the launches wrote, in order
  int launch_calls = 0;          // how often the step's launch function ran (eager or capture)
  std::function<void()> extra;   // called inside the launch function (to inject faults)

  std::function<void()> launch() {
    return [this] {
      ++launch_calls;
      driver.enqueue([this] { out.push_back(device_len); });
      if (extra) extra();
      driver.enqueue([this] { out.push_back(-device_len); });
    };
  }
  StepRun step(StepGraphs& g, int len, StepShape shape = {1, 1, 64}) {
    device_len = len;
    return g.run(shape, launch());
  }
  // The same two launches, each in an op scope of `t`.
  std::function<void(Tracer*)> traced_launch() {
    return [this](Tracer* t) {
      ++launch_calls;
      {
        OpScope op(t, "first", OpCategory::kGemm, 0);
        driver.enqueue([this] { out.push_back(device_len); });
      }
      if (extra) extra();
      OpScope op(t, "second", OpCategory::kNorm, 0);
      driver.enqueue([this] { out.push_back(-device_len); });
    };
  }
  // One step inside a decode_step range of `tracer`.
  StepRun traced_step(StepGraphs& g, Tracer& tracer, int len) {
    device_len = len;
    OpScope step(&tracer, "decode_step", OpCategory::kRange, -1, 0, 0, /*step_range=*/true);
    return g.run({1, 1, 64}, traced_launch(), &tracer);
  }
};

TEST(StepGraphs, WarmsUpCapturesOnceThenReplaysWithInputsUpdatedInPlace) {
  FakeDriver d;
  StepGraphs g(d, "decode step");
  FakeStep s{d};
  EXPECT_EQ(s.step(g, 10), StepRun::kWarmup);
  EXPECT_EQ(s.step(g, 11), StepRun::kCaptured);
  for (int len = 12; len < 16; ++len) EXPECT_EQ(s.step(g, len), StepRun::kReplayed);
  const std::vector<int> want = {10, -10, 11, -11, 12, -12, 13, -13, 14, -14, 15, -15};
  EXPECT_EQ(s.out, want);                 // every step's work once, with its own input
  EXPECT_EQ(s.launch_calls, 2);           // warm-up and capture; replays call nothing
  EXPECT_EQ(d.begins, 1);
  EXPECT_EQ(d.graph_launches, 5);         // the captured step itself, then four replays
  EXPECT_EQ(g.warmups(), 1);
  EXPECT_EQ(g.captures(), 1);
  EXPECT_EQ(g.replays(), 4);
  EXPECT_EQ(g.eager_steps(), 0);
  EXPECT_EQ(g.graphs(), 1u);
  EXPECT_FALSE(g.failed());
  EXPECT_EQ(g.note(), "");
}

TEST(StepGraphs, OneGraphPerShapeEachCapturedOnItsOwnFirstUse) {
  FakeDriver d;
  StepGraphs g(d, "decode step");
  FakeStep s{d};
  const StepShape a{1, 1, 64}, b{16, 1, 64}, longer{1, 1, 128};
  EXPECT_EQ(s.step(g, 1, a), StepRun::kWarmup);
  EXPECT_EQ(s.step(g, 2, a), StepRun::kCaptured);
  EXPECT_EQ(s.step(g, 3, b), StepRun::kWarmup);     // another batch: its own warm-up
  EXPECT_EQ(s.step(g, 4, b), StepRun::kCaptured);
  EXPECT_EQ(s.step(g, 5, a), StepRun::kReplayed);   // back to a: its graph is still there
  EXPECT_EQ(s.step(g, 6, longer), StepRun::kWarmup);  // another context bound is another grid
  EXPECT_EQ(s.step(g, 7, b), StepRun::kReplayed);
  EXPECT_EQ(g.graphs(), 2u);
  EXPECT_EQ(d.begins, 2);
  EXPECT_EQ(s.out, (std::vector<int>{1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7}));
}

TEST(StepGraphs, AMovedBufferDropsTheGraphAndCapturesAgainAfterAWarmUp) {
  FakeDriver d;
  StepGraphs g(d, "decode step");
  FakeStep s{d};
  s.step(g, 1);
  s.step(g, 2);
  EXPECT_EQ(s.step(g, 3), StepRun::kReplayed);
  ++d.epoch;  // e.g. a prefill grew a scratch buffer the graph points into
  EXPECT_EQ(s.step(g, 4), StepRun::kWarmup);
  EXPECT_EQ(s.step(g, 5), StepRun::kCaptured);
  EXPECT_EQ(s.step(g, 6), StepRun::kReplayed);
  EXPECT_EQ(g.captures(), 2);
  EXPECT_EQ(s.out, (std::vector<int>{1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6}));
}

TEST(StepGraphs, ABufferGrowingDuringCaptureRunsTheStepEagerlyAndStartsOver) {
  FakeDriver d;
  StepGraphs g(d, "decode step");
  FakeStep s{d};
  s.step(g, 1);
  s.extra = [&] {
    if (d.recording()) ++d.epoch;  // only the capture grows it (a shape the warm-up missed)
  };
  EXPECT_EQ(s.step(g, 2), StepRun::kEager);
  s.extra = nullptr;
  EXPECT_EQ(s.step(g, 3), StepRun::kWarmup);
  EXPECT_EQ(s.step(g, 4), StepRun::kCaptured);
  EXPECT_FALSE(g.failed());
  EXPECT_EQ(s.out, (std::vector<int>{1, -1, 2, -2, 3, -3, 4, -4}));
}

// Every failure: the failing step's work done once (eagerly), a note naming the reason, and no
// capture tried again.
void expect_fallback(FakeDriver& d, StepGraphs& g, FakeStep& s, const std::string& reason) {
  EXPECT_EQ(s.step(g, 1), StepRun::kWarmup);
  EXPECT_EQ(s.step(g, 2), StepRun::kEager);
  EXPECT_TRUE(g.failed());
  EXPECT_NE(g.note().find(reason), std::string::npos) << g.note();
  EXPECT_NE(g.note().find("every decode step runs eagerly"), std::string::npos) << g.note();
  EXPECT_NE(g.note().find("batch 1"), std::string::npos) << g.note();
  const int begins = d.begins;
  EXPECT_EQ(s.step(g, 3), StepRun::kEager);
  EXPECT_EQ(s.step(g, 4, {8, 1, 64}), StepRun::kEager);  // not even for another shape
  EXPECT_EQ(d.begins, begins);
  EXPECT_EQ(d.graph_launches, 0);
  EXPECT_EQ(g.graphs(), 0u);
  EXPECT_EQ(g.eager_steps(), 3);
  EXPECT_EQ(s.out, (std::vector<int>{1, -1, 2, -2, 3, -3, 4, -4}));
}

TEST(StepGraphs, CaptureThatCannotBeginFallsBackToEagerWithANote) {
  FakeDriver d;
  d.refuse_begin = true;
  StepGraphs g(d, "decode step");
  FakeStep s{d};
  expect_fallback(d, g, s, "begin refused");
  EXPECT_EQ(d.aborts, 0);  // nothing was capturing
}

TEST(StepGraphs, ALaunchRefusedInsideCaptureAbortsItAndFallsBackToEager) {
  FakeDriver d;
  StepGraphs g(d, "decode step");
  FakeStep s{d};
  s.extra = [&] {
    if (d.recording()) throw Error("operation not permitted when stream is capturing");
  };
  expect_fallback(d, g, s, "operation not permitted when stream is capturing");
  EXPECT_EQ(d.aborts, 1);
  EXPECT_FALSE(d.recording());
}

TEST(StepGraphs, InstantiationFailureFallsBackToEagerWithANote) {
  FakeDriver d;
  d.refuse_instantiate = true;
  StepGraphs g(d, "decode step");
  FakeStep s{d};
  expect_fallback(d, g, s, "instantiate refused");
  EXPECT_EQ(d.ends, 1);
  EXPECT_EQ(d.aborts, 0);  // end_capture ended it
}

TEST(StepGraphs, AnEagerStepsErrorPropagates) {
  FakeDriver d;
  StepGraphs g(d, "decode step");
  FakeStep s{d};
  s.extra = [] { throw Error("out of memory"); };
  EXPECT_THROW(s.step(g, 1), Error);  // a warm-up's failure is the step's, not a capture's
  EXPECT_FALSE(g.failed());
  EXPECT_EQ(d.begins, 0);
}

// ---- traced steps: the op of each node ------------------------------------------------

// A capture's scopes: a layer range holding ops a and b, then op c outside it; `pending` are the
// nodes the "driver" names at the next mark.
GraphOps capture_layer(std::vector<std::uint64_t>& pending) {
  GraphOpRecorder rec([&] {
    std::vector<std::uint64_t> out;
    out.swap(pending);
    return out;
  });
  Tracer scratch(TraceLevel::kOps, std::make_unique<HostOpTimer>(), std::chrono::steady_clock::now());
  scratch.set_graph_recorder(&rec);
  {
    OpScope layer(&scratch, "layer", OpCategory::kRange, 0);
    pending = {1};  // launched in the layer before its first op
    {
      OpScope a(&scratch, "a", OpCategory::kGemm, 0, 10, 20);
      pending = {2, 3};
    }
    OpScope b(&scratch, "b", OpCategory::kNorm, 0);
    pending = {4};
  }
  {
    OpScope c(&scratch, "c", OpCategory::kSample);
    pending = {5};
  }
  pending = {6};  // after every scope ended
  return rec.finish(scratch.records());
}

TEST(GraphOps, EachNodeBelongsToTheOpInnermostWhenItWasAdded) {
  std::vector<std::uint64_t> pending;
  const GraphOps g = capture_layer(pending);
  ASSERT_EQ(names_of(g.ops), (std::vector<std::string>{"layer", "a", "b", "c"}));
  EXPECT_EQ(g.ops[1].parent, 0);
  EXPECT_EQ(g.ops[1].depth, 1);
  EXPECT_EQ(g.ops[1].flops, 10);
  EXPECT_EQ(g.ops[1].bytes, 20);
  EXPECT_EQ(g.ops[3].parent, -1);
  const std::unordered_map<std::uint64_t, int> want = {{1, 0}, {2, 1}, {3, 1},
                                                        {4, 2}, {5, 3}, {6, -1}};
  EXPECT_EQ(g.op_of_node, want);
}

TEST(GraphOps, AReplayRecordsTheCapturedOpsInTheOpenScopeNestedAsCaptured) {
  std::vector<std::uint64_t> pending;
  const auto g = std::make_shared<const GraphOps>(capture_layer(pending));
  std::vector<SeenLaunch> seen;
  Tracer tr(TraceLevel::kOps, std::make_unique<GraphSeeingTimer>(seen),
            std::chrono::steady_clock::now());
  int launched = 0;
  for (int step = 1; step <= 2; ++step) {
    tr.set_phase(Phase::kDecode, step);
    OpScope range(&tr, "decode_step", OpCategory::kRange, -1, 0, 0, true);
    tr.graph_launch(g, 0, [&] { ++launched; });
  }
  tr.finish();
  const std::vector<OpRecord>& r = tr.records();
  ASSERT_EQ(names_of(r), (std::vector<std::string>{"decode_step", "layer", "a", "b", "c",
                                                   "decode_step", "layer", "a", "b", "c"}));
  const std::vector<int> depth = {0, 1, 2, 2, 1}, parent = {-1, 0, 1, 1, 0};
  for (int i = 0; i < 10; ++i) {
    const int base = i < 5 ? 0 : 5;
    EXPECT_EQ(r[std::size_t(i)].depth, depth[std::size_t(i - base)]) << i;
    EXPECT_EQ(r[std::size_t(i)].parent, parent[std::size_t(i - base)] < 0
                                            ? -1 : base + parent[std::size_t(i - base)]) << i;
    EXPECT_EQ(r[std::size_t(i)].step, i < 5 ? 1 : 2) << i;
    EXPECT_EQ(r[std::size_t(i)].phase, Phase::kDecode);
  }
  EXPECT_EQ(r[2].flops, 10);
  EXPECT_EQ(launched, 2);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].launch_slot, 0);
  EXPECT_EQ(seen[0].first, 1);
  EXPECT_EQ(seen[1].launch_slot, 5);
  EXPECT_EQ(seen[1].first, 6);
}

TEST(GraphOps, AReplaysAnalyticWorkIsThatOfItsContextLength) {
  // Captured at length 9; the warm-up traced the same ops at length 8: op a's work grew by
  // (3, 5) per position (attention's), op b's not at all.
  std::vector<std::uint64_t> pending;
  GraphOps g = capture_layer(pending);
  g.length = 9;
  std::vector<OpRecord> warm = g.ops;
  warm[1].flops -= 3;
  warm[1].bytes -= 5;
  EXPECT_FALSE(learn_work_per_position(g, warm, 9)) << "two steps at one length say nothing";
  EXPECT_EQ(g.flops_at(1, 20), 10) << "unlearned: the captured work";
  std::vector<OpRecord> other = warm;
  other[2].name = "not_b";
  EXPECT_FALSE(learn_work_per_position(g, other, 8)) << "other ops";
  ASSERT_TRUE(learn_work_per_position(g, warm, 8));
  EXPECT_EQ(g.flops_at(1, 9), 10);
  EXPECT_EQ(g.flops_at(1, 20), 10 + 3 * 11);
  EXPECT_EQ(g.bytes_at(1, 4), 20 - 5 * 5);
  EXPECT_EQ(g.flops_at(2, 20), 0);
}

// A fake driver's StepGraphs and a Tracer whose timer sees graph nodes.
struct TracedFake {
  FakeDriver d;
  StepGraphs g{d, "decode step"};
  FakeStep s{d, 0, {}, 0, nullptr};
  std::vector<SeenLaunch> seen;
  Tracer tr{TraceLevel::kOps, std::make_unique<GraphSeeingTimer>(seen),
            std::chrono::steady_clock::now()};
};

TEST(StepGraphs, ATracedShapeCapturesItsOwnGraphAndEveryLaunchRecordsItsOps) {
  TracedFake f;
  auto& [d, g, s, seen, tr] = f;
  EXPECT_EQ(s.step(g, 1), StepRun::kWarmup);  // untraced: its own graph
  EXPECT_EQ(s.step(g, 2), StepRun::kCaptured);
  EXPECT_EQ(s.traced_step(g, tr, 3), StepRun::kWarmup) << "the untraced graph has no op map";
  EXPECT_EQ(s.traced_step(g, tr, 4), StepRun::kCaptured);
  EXPECT_EQ(s.traced_step(g, tr, 5), StepRun::kReplayed);
  EXPECT_EQ(s.step(g, 6), StepRun::kReplayed);
  EXPECT_EQ(s.out, (std::vector<int>{1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6}));
  tr.finish();
  // Each traced step's ops once: the warm-up's eagerly, the capture's only from its launch.
  EXPECT_EQ(names_of(tr.records()),
            (std::vector<std::string>{"decode_step", "first", "second", "decode_step", "first",
                                      "second", "decode_step", "first", "second"}));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].launch_slot, 3);
  EXPECT_EQ(seen[0].first, 4);
  EXPECT_EQ(seen[1].launch_slot, 6);
  EXPECT_EQ(seen[1].ops, seen[0].ops) << "one graph, one op map";
  const std::unordered_map<std::uint64_t, int> nodes = {{2000, 0}, {2001, 1}};  // 2nd capture
  EXPECT_EQ(seen[0].ops->op_of_node, nodes);
  EXPECT_EQ(g.traced_launches(), 2);
  EXPECT_EQ(g.captures(), 2);
  EXPECT_EQ(g.replays(), 2);
}

TEST(StepGraphs, AFailedTracedCaptureLeavesNoRecordBehind) {
  TracedFake f;
  auto& [d, g, s, seen, tr] = f;
  s.extra = [&] {
    if (d.recording()) throw Error("refused inside the capture");
  };
  EXPECT_EQ(s.traced_step(g, tr, 1), StepRun::kWarmup);
  EXPECT_EQ(s.traced_step(g, tr, 2), StepRun::kEager);  // "first" was recorded in the capture
  EXPECT_TRUE(g.failed());
  tr.finish();
  EXPECT_EQ(names_of(tr.records()), (std::vector<std::string>{"decode_step", "first", "second",
                                                              "decode_step", "first", "second"}));
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(s.out, (std::vector<int>{1, -1, 2, -2}));
}

// ---- the Session's decode path, captured on the CPU --------------------------------------

// Forwards every op to a CpuBackend; between begin_capture and end_capture an op is recorded as
// a closure over its arguments instead of run, and a launch runs the recorded closures. What a
// closure reads through a pointer it reads at replay time, like a kernel reading device memory;
// every argument passed by value is frozen, like a kernel parameter in a CUDA graph.
class RecordingBackend final : public Backend, public GraphDriver {
 public:
  // freeze_kv_length: kv_cache_write_at resolves the positions when recorded (the by-value
  // mistake a captured step must not make), to show the Session check can fail.
  explicit RecordingBackend(bool freeze_kv_length = false) : freeze_(freeze_kv_length) {}

  std::set<DecodeAttention> kernels_seen;  // what the attention ops were asked to run

  std::string name() const override { return "cpu-recording"; }
  std::string device_description() const override { return cpu_.device_description(); }
  bool host_visible() const override { return true; }
  Buffer alloc(std::size_t bytes) override {
    refuse_in_capture("alloc");
    return cpu_.alloc(bytes);
  }
  Buffer alloc_async(std::size_t bytes) override {
    refuse_in_capture("alloc_async");
    return cpu_.alloc_async(bytes);
  }
  void to_device(void* dst, const void* src, std::size_t bytes) override {
    refuse_in_capture("to_device");
    cpu_.to_device(dst, src, bytes);
  }
  void to_host(void* dst, const void* src, std::size_t bytes) override {
    refuse_in_capture("to_host");
    cpu_.to_host(dst, src, bytes);
  }
  void synchronize() override { refuse_in_capture("synchronize"); }
  std::unique_ptr<OpTimer> make_op_timer(TimerMode mode) override {
    return cpu_.make_op_timer(mode);
  }
  GraphDriver* graph_driver() override { return this; }

  void embedding(float* out, const float* table, const std::int32_t* tokens, int n_tokens,
                 int dim) override {
    op([=, this] { cpu_.embedding(out, table, tokens, n_tokens, dim); });
  }
  void rmsnorm(float* out, const float* x, const float* weight, int n_rows, int dim,
               float eps) override {
    op([=, this] { cpu_.rmsnorm(out, x, weight, n_rows, dim, eps); });
  }
  void matmul(float* out, const float* x, const float* w, int m, int n, int k,
              int lda) override {
    op([=, this] { cpu_.matmul(out, x, w, m, n, k, lda); });
  }
  void matmul_half(float* out, const float* x, const std::uint16_t* w, DType dtype, int m, int n,
                   int k, int lda) override {
    op([=, this] { cpu_.matmul_half(out, x, w, dtype, m, n, k, lda); });
  }
  void embedding_half(float* out, const std::uint16_t* table, DType dtype,
                      const std::int32_t* tokens, int n_tokens, int dim) override {
    op([=, this] { cpu_.embedding_half(out, table, dtype, tokens, n_tokens, dim); });
  }
  void add_bias_rows(float* x, int n_rows, int stride, const float* bias, int n) override {
    op([=, this] { cpu_.add_bias_rows(x, n_rows, stride, bias, n); });
  }
  void rope(float* x, int n_rows, int row_stride, int n_heads, int head_dim,
            const std::int32_t* positions, float theta) override {
    op([=, this] { cpu_.rope(x, n_rows, row_stride, n_heads, head_dim, positions, theta); });
  }
  void kv_cache_write(float* cache, const float* src, int src_stride, int batch, int n_new,
                      int past_len, int cache_seq, int kv_dim) override {
    op([=, this] {
      cpu_.kv_cache_write(cache, src, src_stride, batch, n_new, past_len, cache_seq, kv_dim);
    });
  }
  void kv_cache_write_at(float* cache, const float* src, int src_stride, int batch, int n_new,
                         const std::int32_t* positions, int cache_seq, int kv_dim) override {
    if (freeze_) {  // the Backend default: positions read now, past_len frozen into the op
      Backend::kv_cache_write_at(cache, src, src_stride, batch, n_new, positions, cache_seq,
                                 kv_dim);
      return;
    }
    op([=, this] {
      cpu_.kv_cache_write_at(cache, src, src_stride, batch, n_new, positions, cache_seq, kv_dim);
    });
  }
  // The attention ops also note which --decode-attention kernel each call was given.
  void attention(float* out, const float* q, const float* k_cache, const float* v_cache,
                 const AttentionShape& shape, const AttentionStrides& strides,
                 DecodeAttention kernel) override {
    kernels_seen.insert(kernel);
    op([=, this] { cpu_.attention(out, q, k_cache, v_cache, shape, strides, kernel); });
  }
  void attention_at(float* out, const float* q, const float* k_cache, const float* v_cache,
                    const AttentionShape& shape, const AttentionStrides& strides,
                    const std::int32_t* positions, int max_keys,
                    DecodeAttention kernel) override {
    kernels_seen.insert(kernel);
    op([=, this] {
      cpu_.attention_at(out, q, k_cache, v_cache, shape, strides, positions, max_keys, kernel);
    });
  }
  void paged_attention(float* out, const float* q, const float* k_pool, const float* v_pool,
                       const std::int32_t* block_table, const PagedKv& paged,
                       const AttentionShape& shape, const HeadStrides& q_strides,
                       const HeadStrides& out_strides, DecodeAttention kernel) override {
    kernels_seen.insert(kernel);
    op([=, this] {
      cpu_.paged_attention(out, q, k_pool, v_pool, block_table, paged, shape, q_strides,
                           out_strides, kernel);
    });
  }
  void copy_heads(float* out, const HeadStrides& out_strides, const float* in,
                  const HeadStrides& in_strides, int batch, int seq, int heads,
                  int head_dim) override {
    op([=, this] {
      cpu_.copy_heads(out, out_strides, in, in_strides, batch, seq, heads, head_dim);
    });
  }
  void kv_write_paged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                      const float* src, const HeadStrides& src_strides, int batch, int n_new,
                      int past_len, int n_kv_heads, int head_dim) override {
    op([=, this] {
      cpu_.kv_write_paged(pool, block_table, paged, src, src_strides, batch, n_new, past_len,
                          n_kv_heads, head_dim);
    });
  }
  void kv_gather_paged(float* out, const float* pool, const std::int32_t* block_table,
                       const PagedKv& paged, int batch, int len, int kv_dim,
                       int out_seq) override {
    op([=, this] {
      cpu_.kv_gather_paged(out, pool, block_table, paged, batch, len, kv_dim, out_seq);
    });
  }
  void kv_write_ragged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                       const float* src, int src_stride, const std::int32_t* seq,
                       const std::int32_t* pos, int n_rows, int kv_dim) override {
    op([=, this] {
      cpu_.kv_write_ragged(pool, block_table, paged, src, src_stride, seq, pos, n_rows, kv_dim);
    });
  }
  void ragged_paged_attention(float* out, int out_stride, const float* q, int q_stride,
                              const float* k_pool, const float* v_pool,
                              const std::int32_t* block_table, const PagedKv& paged,
                              const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                              int n_heads, int n_kv_heads, int head_dim) override {
    op([=, this] {
      cpu_.ragged_paged_attention(out, out_stride, q, q_stride, k_pool, v_pool, block_table,
                                  paged, seq, pos, n_rows, n_heads, n_kv_heads, head_dim);
    });
  }
  void swiglu(float* out, const float* gate_up, int n_rows, int ffn_dim) override {
    op([=, this] { cpu_.swiglu(out, gate_up, n_rows, ffn_dim); });
  }
  void add_inplace(float* x, const float* y, std::size_t n) override {
    op([=, this] { cpu_.add_inplace(x, y, n); });
  }
  void gather_rows(float* out, const float* x, const std::int32_t* rows, int n_rows,
                   int dim) override {
    op([=, this] { cpu_.gather_rows(out, x, rows, n_rows, dim); });
  }
  void argmax_rows(std::int32_t* out, const float* x, int n_rows, int n_cols) override {
    op([=, this] { cpu_.argmax_rows(out, x, n_rows, n_cols); });
  }
  // --fuse small: the CPU's fused ops (swiglu_down's default is the two ops above).
  void add_rmsnorm(float* x, const float* residual, float* out, const float* weight, int n_rows,
                   int dim, float eps) override {
    op([=, this] { cpu_.add_rmsnorm(x, residual, out, weight, n_rows, dim, eps); });
  }
  void rope_kv_write(float* qkv, float* k_cache, float* v_cache, const std::int32_t* positions,
                     const RopeKvShape& s) override {
    op([=, this] { cpu_.rope_kv_write(qkv, k_cache, v_cache, positions, s); });
  }

  // GraphDriver
  void begin_capture() override {
    recording_ = std::make_unique<Recorded>();
    named_ = 0;
  }
  std::vector<std::uint64_t> new_nodes() override {  // a recorded op is a node, ids from 1
    std::vector<std::uint64_t> out;
    for (; recording_ && named_ < recording_->size(); ++named_) out.push_back(named_ + 1);
    return out;
  }
  std::unique_ptr<GraphExec> end_capture() override {
    auto g = std::make_unique<FakeGraph>();
    g->work = std::move(*recording_);
    recording_.reset();
    if (g->work.empty()) throw Error("nothing was recorded");
    return g;
  }
  void abort_capture() noexcept override { recording_.reset(); }
  void launch(GraphExec& graph) override {
    for (auto& w : static_cast<FakeGraph&>(graph).work) w();
  }
  std::uint64_t buffer_epoch() const override { return 0; }

 private:
  using Recorded = std::vector<std::function<void()>>;
  void op(std::function<void()> work) {
    if (recording_)
      recording_->push_back(std::move(work));
    else
      work();
  }
  void refuse_in_capture(const char* what) const {
    if (recording_) throw Error(std::string(what) + " inside a capture");
  }

  CpuBackend cpu_{1};
  bool freeze_;
  std::unique_ptr<Recorded> recording_;
  std::size_t named_ = 0;
};

constexpr int kPrompt = 5, kSteps = 6;

// Two requests on one Session (the second replays the first one's graph), prefill + kSteps
// decode steps each; the second traced when `trace` says so. With the Session's graph counts.
struct TwoRequests {
  std::vector<test::Generation> g;
  bool has_graphs = false;
  int warmups = 0, captures = 0, replays = 0, traced_launches = 0;
  std::string note;
  std::vector<OpRecord> trace;      // the second request's, when traced
  std::vector<SeenLaunch> launches;  // graph launches a graph-seeing timer was handed
};

// `graph_timer`: the traced request's timer sees graph nodes (as CUPTI's does), else the
// backend's own (which does not).
TwoRequests two_requests(Backend& be, const Variants& v, int batch, bool trace = false,
                         bool graph_timer = false) {
  const ModelConfig c = *find_preset("tiny");
  const Model model(c, load_weights(c, RandomWeights(3), be, DType::kFp32), be);
  Session session(model, batch, kPrompt, kPrompt + kSteps, v);
  const auto prompts = synthetic_prompts(3, batch, kPrompt, c.vocab_size, true);
  TwoRequests r;
  r.g.push_back(test::generate(session, prompts, kPrompt, kSteps));
  Tracer tracer(TraceLevel::kOps,
                graph_timer ? std::make_unique<GraphSeeingTimer>(r.launches)
                            : be.make_op_timer(TimerMode::kDevice),
                std::chrono::steady_clock::now());
  if (trace) session.set_tracer(&tracer);
  r.g.push_back(test::generate(session, prompts, kPrompt, kSteps));
  session.set_tracer(nullptr);
  tracer.finish();
  r.trace = tracer.records();
  if (const StepGraphs* graphs = session.graphs()) {
    r.has_graphs = true;
    r.warmups = graphs->warmups();
    r.captures = graphs->captures();
    r.replays = graphs->replays();
    r.traced_launches = graphs->traced_launches();
  }
  r.note = session.graph_note();
  return r;
}

bool bit_identical(const test::Generation& a, const test::Generation& b) {
  if (a.tokens != b.tokens || a.logits.size() != b.logits.size()) return false;
  for (std::size_t i = 0; i < a.logits.size(); ++i)
    if (a.logits[i].size() != b.logits[i].size() ||
        std::memcmp(a.logits[i].data(), b.logits[i].data(), a.logits[i].size() * 4) != 0)
      return false;
  return true;
}

Variants with_graphs() {
  Variants v;
  v.cuda_graphs = true;
  return v;
}

// Unfused and --fuse small (whose fused RoPE + KV write reads its cache rows from the positions).
TEST(SessionGraphs, ReplayedDecodeStepsEqualEagerOnesBitForBit) {
  for (const FuseMode fuse : {FuseMode::kNone, FuseMode::kSmall}) {
    for (int batch : {1, 3}) {
      SCOPED_TRACE(::testing::Message() << "fuse " << fuse_mode_name(fuse) << ", batch " << batch);
      Variants plain, graphs = with_graphs();
      plain.fuse = graphs.fuse = fuse;
      CpuBackend cpu(1);
      const TwoRequests eager = two_requests(cpu, plain, batch);
      RecordingBackend rec;
      const TwoRequests replayed = two_requests(rec, graphs, batch);
      ASSERT_TRUE(replayed.has_graphs);
      EXPECT_EQ(replayed.note, "");
      // Request 1: step 1 warms up, step 2 is captured, 3..6 replay; request 2 replays all 6.
      EXPECT_EQ(replayed.warmups, 1);
      EXPECT_EQ(replayed.captures, 1);
      EXPECT_EQ(replayed.replays, 2 * kSteps - 2);
      for (int r = 0; r < 2; ++r) EXPECT_TRUE(bit_identical(replayed.g[r], eager.g[r])) << r;
    }
  }
}

TEST(SessionGraphs, ALengthFrozenAtCaptureGivesOtherLogits) {
  // The check above can fail: with the KV write's position resolved when recorded, every
  // replay writes its keys over the captured step's row.
  CpuBackend cpu(1);
  const TwoRequests eager = two_requests(cpu, Variants{}, 1);
  RecordingBackend frozen(/*freeze_kv_length=*/true);
  const TwoRequests replayed = two_requests(frozen, with_graphs(), 1);
  EXPECT_EQ(replayed.captures, 1);
  EXPECT_FALSE(bit_identical(replayed.g[0], eager.g[0]));
}

TEST(SessionGraphs, TracedDecodeStepsRunEagerly) {
  CpuBackend cpu(1);
  const TwoRequests eager = two_requests(cpu, Variants{}, 2);
  RecordingBackend rec;
  const TwoRequests traced = two_requests(rec, with_graphs(), 2, /*trace=*/true);
  // Request 1 as above; request 2, traced, neither replays nor captures.
  EXPECT_EQ(traced.captures, 1);
  EXPECT_EQ(traced.replays, kSteps - 2);
  EXPECT_TRUE(bit_identical(traced.g[1], eager.g[1]));
}

// The shape of a trace, without times: every record's name, category, layer, depth, parent,
// phase, step and analytic work.
std::vector<std::string> shape_of(const std::vector<OpRecord>& records) {
  std::vector<std::string> out;
  for (const OpRecord& r : records)
    out.push_back(std::string(r.name) + " " + std::string(category_name(r.category)) + " " +
                  std::to_string(r.layer) + " " + std::to_string(r.depth) + " " +
                  std::to_string(r.parent) + " " + std::string(phase_name(r.phase)) + " " +
                  std::to_string(r.step) + " " + std::to_string(r.flops) + " " +
                  std::to_string(r.bytes));
  return out;
}

TEST(SessionGraphs, TracedStepsReplayWhenTheTimerSeesGraphNodesAndRecordTheEagerOps) {
  for (const FuseMode fuse : {FuseMode::kNone, FuseMode::kSmall}) {
    SCOPED_TRACE(fuse_mode_name(fuse));
    Variants plain, graphs = with_graphs();
    plain.fuse = graphs.fuse = fuse;
    CpuBackend cpu(1);
    const TwoRequests eager = two_requests(cpu, plain, 2, /*trace=*/true);
    RecordingBackend rec;
    const TwoRequests traced = two_requests(rec, graphs, 2, /*trace=*/true, /*graph_timer=*/true);
    EXPECT_TRUE(bit_identical(traced.g[1], eager.g[1]));
    // Request 2, traced: its own graph, warmed up at step 1, captured at 2, replayed at 3..6.
    EXPECT_EQ(traced.captures, 2);
    EXPECT_EQ(traced.traced_launches, kSteps - 1);
    ASSERT_EQ(traced.launches.size(), std::size_t(kSteps - 1));
    // Replayed steps record the ops an eager traced step records.
    const std::vector<std::string> want = shape_of(eager.trace), got = shape_of(traced.trace);
    EXPECT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i)
      ASSERT_EQ(got[i], want[i]) << "record " << i;
    // Every recorded launch of the capture is a node with an op (none outside every op).
    const GraphOps& ops = *traced.launches[0].ops;
    EXPECT_FALSE(ops.op_of_node.empty());
    for (const auto& [node, op] : ops.op_of_node) {
      ASSERT_GE(op, 0) << node;
      EXPECT_NE(ops.ops[std::size_t(op)].category, OpCategory::kRange) << ops.ops[std::size_t(op)].name;
    }
    for (const SeenLaunch& l : traced.launches)
      EXPECT_EQ(std::string(traced.trace[std::size_t(l.launch_slot)].name), "decode_step");
  }
}

TEST(SessionGraphs, TheCpuBackendAndNaiveVariantsRunEagerlyWithANote) {
  CpuBackend cpu(1);
  const TwoRequests eager = two_requests(cpu, Variants{}, 2);
  const TwoRequests on_cpu = two_requests(cpu, with_graphs(), 2);
  EXPECT_FALSE(on_cpu.has_graphs);
  EXPECT_NE(on_cpu.note.find("cannot capture graphs"), std::string::npos) << on_cpu.note;
  EXPECT_TRUE(bit_identical(on_cpu.g[0], eager.g[0]));

  RecordingBackend rec;
  Variants naive = with_graphs();
  naive.kv_cache = KvCacheKind::kConcat;  // allocates every pass: never captured
  const TwoRequests concat = two_requests(rec, naive, 1);
  EXPECT_FALSE(concat.has_graphs);
  EXPECT_NE(concat.note.find("only the fast paths"), std::string::npos) << concat.note;
}

// --decode-attention reaches every attention call of every cache, captured steps' included
// (attention_at); the CPU runs one kernel for both, so the logits are tiled's bit for bit.
TEST(DecodeAttentionVariants, EveryAttentionCallRunsTheCasesKernel) {
  CpuBackend cpu(1);
  for (const KvCacheKind kv : {KvCacheKind::kPrealloc, KvCacheKind::kConcat, KvCacheKind::kPaged,
                               KvCacheKind::kPagedGather})
    for (const DecodeAttention kernel : {DecodeAttention::kTiled, DecodeAttention::kStreamed}) {
      Variants v = with_graphs();  // captured where the cache allows it (prealloc)
      v.kv_cache = kv;
      v.kv_cache_block = 4;
      v.decode_attention = kernel;
      SCOPED_TRACE(v.describe());
      Variants plain = v;
      plain.cuda_graphs = false;
      plain.decode_attention = DecodeAttention::kTiled;
      const TwoRequests eager = two_requests(cpu, plain, 2);
      RecordingBackend rec;
      const TwoRequests r = two_requests(rec, v, 2);
      EXPECT_EQ(r.has_graphs, kv == KvCacheKind::kPrealloc);
      EXPECT_EQ(rec.kernels_seen, std::set<DecodeAttention>{kernel});
      for (int i = 0; i < 2; ++i) EXPECT_TRUE(bit_identical(r.g[i], eager.g[i])) << i;
    }
}

TEST(DevicePositions, HostDefaultsEqualTheOpsTakingPastLen) {
  CpuBackend cpu(1);
  const int B = 2, T = 3, P = 4, S = 9, KV = 8, HD = 4, H = 4;
  std::vector<float> src(std::size_t(B) * T * 12), a(std::size_t(B) * S * KV, -1.0f), b = a;
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = float(i) * 0.25f;
  std::vector<std::int32_t> pos;
  for (int s = 0; s < B; ++s)
    for (int t = 0; t < T; ++t) pos.push_back(P + t);
  cpu.kv_cache_write(a.data(), src.data(), 12, B, T, P, S, KV);
  cpu.kv_cache_write_at(b.data(), src.data(), 12, B, T, pos.data(), S, KV);
  EXPECT_EQ(a, b);

  const AttentionShape shape{B, T, P, H, 2, HD, 0, 0, 0};
  const AttentionStrides strides{token_major(T, H * HD, HD), token_major(S, KV, HD),
                                 token_major(T, H * HD, HD)};
  std::vector<float> q(std::size_t(B) * T * H * HD);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = float(i % 7) * 0.1f;
  std::vector<float> out_a(q.size()), out_b(q.size());
  const DecodeAttention tiled = DecodeAttention::kTiled;
  cpu.attention(out_a.data(), q.data(), a.data(), a.data(), shape, strides, tiled);
  AttentionShape unused = shape;
  unused.past_len = 0;  // attention_at reads the length from the positions
  cpu.attention_at(out_b.data(), q.data(), a.data(), a.data(), unused, strides, pos.data(), S,
                   tiled);
  EXPECT_EQ(out_a, out_b);

  EXPECT_THROW(cpu.attention_at(out_b.data(), q.data(), a.data(), a.data(), unused, strides,
                                pos.data(), P + T - 1, tiled),
               Error);  // more keys than max_keys
  pos[4] = P;          // sequence 1's second token at the first one's position
  EXPECT_THROW(cpu.kv_cache_write_at(b.data(), src.data(), 12, B, T, pos.data(), S, KV), Error);
}

}  // namespace
}  // namespace llmbench
