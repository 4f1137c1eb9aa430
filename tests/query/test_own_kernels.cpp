// llmbench's own CUDA trace read by the device queries as an imported one (#44 section 2), with
// no GPU: synthetic CUPTI activity (kernels, a memset, their API calls' external correlation
// ids) goes through ActivityAttribution into a Tracer's records and device work (a timer that
// resolves at the end, as the CUPTI timer does), ResultStore stores the ops on their thread
// track and the kernels as their children on GPU tracks, and kernel_summary,
// kernel_by_nvtx_range and launch_overhead give the rows worked out here by hand; the op
// queries (top_ops, op_gaps) still see the ops only.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "engine/model/activity_attribution.h"
#include "engine/model/trace.h"
#include "tools/query/bundled_queries.h"
#include "tools/query/query_runner.h"
#include "tools/store/store.h"

namespace llmbench {
namespace {

namespace fs = std::filesystem;

// Device clock 1'000'000 ns is the tracer's 0.
constexpr std::int64_t kDeviceAtOrigin = 1'000'000;

// The CUPTI timer's bookkeeping with the CUPTI calls taken out: a slot per op, ranges marked,
// activity attributed at the end, each op's interval and its device work read from the
// attribution as cupti_timer.cpp reads them. The test hands it the activity CUPTI would have
// delivered.
class SyntheticCuptiTimer final : public OpTimer {
 public:
  explicit SyntheticCuptiTimer(ActivityAttribution*& handle) { handle = &attribution_; }
  bool resolves_at_end() const override { return true; }
  void mark_range(int slot) override { next_range_ = slot; }
  void start(int slot) override {
    attribution_.add_slot(slot, open_.empty() ? -1 : open_.back(), next_range_ == slot);
    open_.push_back(slot);
  }
  void stop(int) override { open_.pop_back(); }
  void resolve(int slot, std::chrono::steady_clock::time_point, std::int64_t& start_ns,
               std::int64_t& dur_ns) override {
    if (times_.empty()) times_ = attribution_.resolve();
    ASSERT_TRUE(ActivityAttribution::interval(times_[std::size_t(slot)], start_ns, dur_ns));
    start_ns -= kDeviceAtOrigin;
  }
  void device_work(std::chrono::steady_clock::time_point, DeviceTrace& out) override {
    out.names = names.names();
    out.records = attribution_.device_work(-kDeviceAtOrigin);
  }
  KernelNames names;

 private:
  ActivityAttribution attribution_;
  std::vector<int> open_;
  int next_range_ = -1;
  std::vector<SlotDeviceTime> times_;
};

using Row = std::map<std::string, SqlValue>;

double num(const SqlValue& v) {
  if (const auto* d = std::get_if<double>(&v.v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v.v)) return double(*i);
  ADD_FAILURE() << "not a number: " << v.to_sql();
  return -1;
}

std::string plain(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

std::string text(const SqlValue& v) {
  if (const auto* s = std::get_if<std::string>(&v.v)) return *s;
  return v.to_sql();
}

class OwnKernels : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    ActivityAttribution* a = nullptr;
    auto timer = std::make_unique<SyntheticCuptiTimer>(a);
    SyntheticCuptiTimer* t = timer.get();
    const auto origin = std::chrono::steady_clock::now();
    Tracer tracer(TraceLevel::kOps, std::move(timer), origin);
    // Slots: 0 prefill > 1 layer 0 > {2 qkv_proj, 3 attention}, 4 lm_head;
    //        5 decode_step > 6 layer 0 > 7 qkv_proj.
    tracer.set_phase(Phase::kPrefill, 0);
    const int prefill = tracer.begin("prefill", OpCategory::kRange, -1, 0, 0);
    const int layer = tracer.begin("layer", OpCategory::kRange, 0, 0, 0);
    tracer.end(tracer.begin("qkv_proj", OpCategory::kGemm, 0, 100, 200));
    tracer.end(tracer.begin("attention", OpCategory::kAttention, 0, 10, 20));
    tracer.end(layer);
    tracer.end(tracer.begin("lm_head", OpCategory::kGemm, -1, 300, 400));
    tracer.end(prefill);
    tracer.set_phase(Phase::kDecode, 1);
    const int step = tracer.begin("decode_step", OpCategory::kRange, -1, 0, 0);
    const int layer1 = tracer.begin("layer", OpCategory::kRange, 0, 0, 0);
    tracer.end(tracer.begin("qkv_proj", OpCategory::kGemm, 0, 100, 200));
    tracer.end(layer1);
    tracer.end(step);

    // What CUPTI would deliver: each API call's external id (base 0 + slot), then the device
    // work with its correlation id. Call 9 has no external id: not ours, left out.
    for (auto [corr, slot] : std::vector<std::pair<std::uint32_t, std::uint64_t>>{
             {1, 2}, {2, 2}, {3, 3}, {4, 4}, {5, 4}, {6, 7}})
      a->add_correlation(corr, slot);
    const int gemv = t->names.intern("gemv_half");
    const int convert = t->names.intern("convert_f16");
    const int attn = t->names.intern("attention_decode");
    const int memset = t->names.intern("Memset");
    const int stray = t->names.intern("stray");
    auto add = [&](std::uint32_t corr, std::int64_t s, std::int64_t e, int name,
                   DeviceWorkKind kind = DeviceWorkKind::kKernel, std::uint32_t stream = 7,
                   std::int64_t bytes = 0) {
      DeviceActivity d;
      d.correlation_id = corr;
      d.start_ns = kDeviceAtOrigin + s;
      d.end_ns = kDeviceAtOrigin + e;
      d.kind = kind;
      d.name = name;
      d.stream = stream;
      d.bytes = bytes;
      a->add_activity(d);
    };
    add(1, 1000, 3000, gemv);
    add(2, 3500, 4000, convert);
    add(3, 5000, 8000, attn);
    add(4, 9000, 10000, gemv);
    add(5, 10100, 10200, memset, DeviceWorkKind::kMemset, 8, 256);
    add(6, 20000, 22000, gemv);
    add(9, 30000, 31000, stray);
    tracer.finish();

    trace_ = tracer.records();
    work_ = tracer.device_trace();

    path_ = fs::path(LLMBENCH_TEST_SCRATCH) / "query" /
            ("own_kernels_" + std::to_string(::getpid()) + ".db");
    fs::create_directories(path_.parent_path());
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
    ResultStore store(path_.string());
    RunInfo info = current_run_info();
    info.command_line = "test";
    const std::int64_t run = store.begin_run(info);
    CaseResult c;
    c.spec.model = "tiny";
    c.spec.backend = "cuda";
    c.spec.batch = 1;
    c.spec.prompt_len = 4;
    c.spec.max_new_tokens = 2;
    c.trace = trace_;
    c.trace_device = work_;
    case_id_ = store.add_case(run, c);
  }
  static void TearDownTestSuite() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }

  static std::vector<Row> query(const std::string& name,
                                std::map<std::string, std::string> params = {}) {
    const BundledQuery* q = find_bundled_query(name);
    EXPECT_NE(q, nullptr) << name;
    if (!q) return {};
    auto db = open_query_db(path_.string());
    const QueryResult r = run_query(*db, {"query '" + name + "'", std::string(q->sql), q->header},
                                    params);
    std::vector<Row> out;
    for (const auto& row : r.rows) {
      Row named;
      for (std::size_t i = 0; i < row.size(); ++i) named[r.columns[i]] = row[i];
      out.push_back(named);
    }
    return out;
  }

  static inline std::vector<OpRecord> trace_;
  static inline DeviceTrace work_;
  static inline fs::path path_;
  static inline std::int64_t case_id_ = 0;
};

TEST_F(OwnKernels, EachOpKeepsItsKernelsWithNamesThatOutliveTheRecords) {
  ASSERT_EQ(trace_.size(), 8u);
  EXPECT_EQ(trace_[2].start_ns, 1000);
  EXPECT_EQ(trace_[2].dur_ns, 2000 + 500) << "an op's time is its kernels' time";
  ASSERT_EQ(work_.records.size(), 6u) << "the call without an external id is not ours";
  const std::vector<std::pair<int, std::string>> expected = {
      {2, "gemv_half"}, {2, "convert_f16"}, {3, "attention_decode"},
      {4, "gemv_half"}, {4, "Memset"},      {7, "gemv_half"}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const DeviceWorkRecord& w = work_.records[i];
    EXPECT_EQ(w.op, expected[i].first) << i;
    EXPECT_EQ(work_.names[std::size_t(w.name)], expected[i].second) << i;
  }
  EXPECT_EQ(work_.records[0].start_ns, 1000) << "on the tracer's clock";
  EXPECT_EQ(work_.records[0].dur_ns, 2000);
  EXPECT_EQ(work_.records[4].kind, DeviceWorkKind::kMemset);
  EXPECT_EQ(work_.records[4].bytes, 256);
  EXPECT_EQ(work_.records[4].stream, 8u);
}

TEST_F(OwnKernels, KernelsAreChildrenOfTheirOpsOnOneGpuTrackPerStream) {
  auto db = open_query_db(path_.string());
  Stmt tracks = db->prepare(
      "SELECT type, name, device_id, stream_id FROM track WHERE case_id = ? ORDER BY id");
  tracks.bind(1, case_id_);
  std::vector<std::string> got;
  while (tracks.step()) {
    const bool gpu = tracks.column_text(0) == "gpu";
    got.push_back(tracks.column_text(0) + (gpu ? "|" + tracks.column_text(1) + "|" +
                                                     tracks.column_text(2) + "|" +
                                                     tracks.column_text(3)
                                               : std::string()));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"thread", "gpu|GPU 0 stream 7|0|7",
                                           "gpu|GPU 0 stream 8|0|8"}));
  Stmt kernels = db->prepare(
      "SELECT k.name, k.category, p.name, k.depth - p.depth, k.case_id IS NULL, k.phase IS NULL,"
      " k.correlation_id, k.bytes FROM event AS k JOIN event AS p ON p.id = k.parent_id"
      " JOIN track AS t ON t.id = k.track_id WHERE t.type = 'gpu' ORDER BY k.ts");
  std::vector<std::string> rows;
  while (kernels.step())
    rows.push_back(kernels.column_text(0) + "|" + kernels.column_text(1) + "|" +
                   kernels.column_text(2) + "|" + std::to_string(kernels.column_int(3)) +
                   std::to_string(kernels.column_int(4)) + std::to_string(kernels.column_int(5)) +
                   "|" + std::to_string(kernels.column_int(6)) + "|" +
                   (kernels.column_is_null(7) ? "NULL" : std::to_string(kernels.column_int(7))));
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "gemv_half|kernel|qkv_proj|111|1|NULL",
                      "convert_f16|kernel|qkv_proj|111|2|NULL",
                      "attention_decode|kernel|attention|111|3|NULL",
                      "gemv_half|kernel|lm_head|111|4|NULL",
                      "Memset|gpu_memset|lm_head|111|5|256",
                      "gemv_half|kernel|qkv_proj|111|6|NULL",
                  }));
}

TEST_F(OwnKernels, KernelSummaryListsTheKernelsNotTheOps) {
  const std::vector<Row> rows = query("kernel_summary");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(text(rows[0].at("name")), "gemv_half");
  EXPECT_EQ(text(rows[0].at("category")), "kernel");
  EXPECT_EQ(num(rows[0].at("n")), 3);
  EXPECT_DOUBLE_EQ(num(rows[0].at("total_ms")), 0.005);
  EXPECT_DOUBLE_EQ(num(rows[0].at("max_us")), 2);
  EXPECT_DOUBLE_EQ(num(rows[0].at("share")), 5000.0 / 8600);
  EXPECT_EQ(text(rows[1].at("name")), "attention_decode");
  EXPECT_EQ(text(rows[2].at("name")), "convert_f16");
  EXPECT_EQ(text(rows[3].at("name")), "Memset");
  EXPECT_EQ(text(rows[3].at("category")), "gpu_memset");
  EXPECT_EQ(num(rows[3].at("bytes")), 256);
  EXPECT_TRUE(rows[0].at("bytes").is_null());
  EXPECT_EQ(query("kernel_summary", {{"case_id", std::to_string(case_id_)}}).size(), 4u);
}

TEST_F(OwnKernels, KernelByNvtxRangeGivesEachKernelTheRangeAroundItsOp) {
  std::vector<std::string> got;
  for (const Row& r : query("kernel_by_nvtx_range"))
    got.push_back(text(r.at("range_name")) + "|" + text(r.at("name")) + "|" +
                  plain(num(r.at("n"))) + "|" + plain(num(r.at("total_us"))));
  EXPECT_EQ(got, (std::vector<std::string>{
                     "layer|gemv_half|2|4",
                     "layer|attention_decode|1|3",
                     "layer|convert_f16|1|0.5",
                     "prefill|gemv_half|1|1",
                     "prefill|Memset|1|0.1",
                 }));
}

TEST_F(OwnKernels, LaunchOverheadIsEachRangeMinusItsKernels) {
  std::map<std::string, Row> by_name;
  for (const Row& r : query("launch_overhead")) by_name[text(r.at("name"))] = r;
  ASSERT_EQ(by_name.size(), 3u);
  // The layers span their ops' kernels: 1000..8000 and 20000..22000.
  const Row& layer = by_name.at("layer");
  EXPECT_EQ(num(layer.at("n")), 2);
  EXPECT_EQ(num(layer.at("ops")), 4);
  EXPECT_DOUBLE_EQ(num(layer.at("range_us")), 9);
  EXPECT_DOUBLE_EQ(num(layer.at("op_us")), 7.5);
  EXPECT_DOUBLE_EQ(num(layer.at("overhead_us")), 1.5);
  const Row& prefill = by_name.at("prefill");  // 1000..10200, every prefill kernel
  EXPECT_EQ(num(prefill.at("ops")), 5);
  EXPECT_DOUBLE_EQ(num(prefill.at("range_us")), 9.2);
  EXPECT_NEAR(num(prefill.at("op_us")), 6.6, 1e-12);
  const Row& step = by_name.at("decode_step");
  EXPECT_EQ(num(step.at("ops")), 1);
  EXPECT_DOUBLE_EQ(num(step.at("overhead_us")), 0);
}

TEST_F(OwnKernels, OpQueriesStillReadTheOpsOnly) {
  for (const Row& r : query("top_ops"))
    EXPECT_NE(text(r.at("category")), "kernel") << text(r.at("name"));
  EXPECT_EQ(query("top_ops").size(), 4u);  // qkv_proj, attention, lm_head; qkv_proj (decode)
  for (const Row& r : query("op_gaps")) {
    EXPECT_NE(text(r.at("prev_op")), "gemv_half");
    EXPECT_NE(text(r.at("next_op")), "gemv_half");
  }
}

}  // namespace
}  // namespace llmbench
