// Energy per phase without a GPU (engine/bench/energy.h, nvml.h): the NVML loader's clean
// absence paths (a missing library, a missing symbol, an NVML error), the fake NVML
// (tests/engine/fake_nvml.cpp) loaded through LLMBENCH_NVML_LIBRARY, the arithmetic with exact
// values, and a tiny CPU case run with a meter over the fake counter, stored and printed, so the
// accounting, the columns and the table are checked end to end. The product meters CUDA cases
// only (a board's counter); the CUDA path itself waits for a device (docs/gpu-validation.md).
#include <gtest/gtest.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include "engine/bench/bench_case.h"
#include "engine/bench/energy.h"
#include "engine/bench/nvml.h"
#include "engine/model/cpu_backend.h"
#include "engine/model/model.h"
#include "tools/console/result_rows.h"
#include "tools/serve/engine_loop.h"
#include "tools/serve/serve_energy.h"
#include "tools/store/run_info.h"
#include "tools/store/store.h"

namespace llmbench {
namespace {

namespace fs = std::filesystem;

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name);
      saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
      if (value) setenv(name, value, 1); else unsetenv(name);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, old] : saved_)
      if (old) setenv(name.c_str(), old->c_str(), 1); else unsetenv(name.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// The fake's own controls (not NVML's), through the handle the loader shares.
void reset_fake() {
  void* h = dlopen(LLMBENCH_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr);
  reinterpret_cast<void (*)()>(dlsym(h, "fake_nvml_reset"))();
  dlclose(h);
}

std::string fake_bus_id() {
  void* h = dlopen(LLMBENCH_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
  std::string id = reinterpret_cast<const char* (*)()>(dlsym(h, "fake_nvml_bus_id"))();
  dlclose(h);
  return id;
}

TEST(NvmlLoader, MissingLibraryIsUnavailableWithOneLineNote) {
  const Nvml nvml("", "libllmbench-no-such-nvml.so.1");
  EXPECT_FALSE(nvml.available());
  EXPECT_EQ(nvml.note().rfind("NVML unavailable: libllmbench-no-such-nvml.so.1 not found", 0), 0u)
      << nvml.note();
  EXPECT_EQ(nvml.note().find('\n'), std::string::npos);
  EXPECT_FALSE(nvml.energy_mj());
  EXPECT_FALSE(nvml.power_limit_w());
}

TEST(NvmlLoader, EnvironmentNamesTheLibraryAndMissingNamesTheDefault) {
  {
    const ScopedEnv env{{kNvmlLibraryEnv, "/nonexistent/libnvidia-ml.so.1"}};
    const Nvml nvml("");
    EXPECT_EQ(nvml.library(), "/nonexistent/libnvidia-ml.so.1");
    EXPECT_FALSE(nvml.available());
  }
  const ScopedEnv env{{kNvmlLibraryEnv, nullptr}};
  EXPECT_EQ(Nvml("", "").library(), kNvmlLibrary);
}

TEST(NvmlLoader, MissingEnergySymbolIsUnavailable) {
  const Nvml nvml("", LLMBENCH_FAKE_NVML_NO_ENERGY);
  EXPECT_FALSE(nvml.available());
  EXPECT_NE(nvml.note().find("has no nvmlDeviceGetTotalEnergyConsumption"), std::string::npos)
      << nvml.note();
}

TEST(NvmlLoader, NvmlErrorsAreUnavailableWithTheCallAndItsError) {
  for (const auto& [fail, call] : {std::pair<const char*, const char*>{"init", "nvmlInit_v2 failed: Uninitialized"},
                                   {"handle", "nvmlDeviceGetHandleByIndex_v2(0) failed: Not Found"}}) {
    const ScopedEnv env{{"LLMBENCH_FAKE_NVML_FAIL", fail}};
    const Nvml nvml("", LLMBENCH_FAKE_NVML);
    EXPECT_FALSE(nvml.available()) << fail;
    EXPECT_EQ(nvml.note(), std::string("NVML unavailable: ") + call);
  }
}

TEST(NvmlLoader, FakeThroughTheEnvironmentIsAvailableForTheCudaDevicesBus) {
  const ScopedEnv env{{kNvmlLibraryEnv, LLMBENCH_FAKE_NVML},
                      {"LLMBENCH_FAKE_NVML_MJ_PER_READ", "7"},
                      {"LLMBENCH_FAKE_NVML_LIMIT_W", "350"}};
  reset_fake();
  const Nvml nvml("0000:3b:00.0");
  ASSERT_TRUE(nvml.available()) << nvml.note();
  EXPECT_EQ(nvml.note(), "");
  EXPECT_EQ(fake_bus_id(), "0000:3b:00.0");
  EXPECT_EQ(nvml.power_limit_w(), 350.0);
  // The loader read the counter once (7); each read advances it by 7 mJ.
  EXPECT_EQ(nvml.energy_mj(), 14u);
  const EnergyMeter meter = nvml.meter();
  EXPECT_EQ(meter.read()->mj, 21u);
  EXPECT_EQ(meter.power_limit_w(), 350.0);
}

TEST(NvmlLoader, FailedReadAfterStartIsNullopt) {
  const ScopedEnv env{{"LLMBENCH_FAKE_NVML_FAIL", "energy"}, {"LLMBENCH_FAKE_NVML_MJ_PER_READ", "1"}};
  reset_fake();
  const Nvml nvml("", LLMBENCH_FAKE_NVML);
  ASSERT_TRUE(nvml.available());
  EXPECT_FALSE(nvml.energy_mj());
  EXPECT_FALSE(nvml.meter().read());
}

TEST(EnergyArithmetic, SpansPhasesAndRatiosAreExact) {
  EXPECT_FALSE(energy_span(std::nullopt, EnergyReading{5, 10}));
  EXPECT_FALSE(energy_span(EnergyReading{9, 0}, EnergyReading{5, 10}));  // counter went back
  const EnergySpan s = *energy_span(EnergyReading{1000, 2000000}, EnergyReading{4000, 12000000});
  EXPECT_EQ(s.mj, 3000);
  EXPECT_EQ(s.ns, 10000000);
  PhaseEnergy p;
  EXPECT_FALSE(p.j_per_token());
  EXPECT_FALSE(p.watts());
  p.add(s, 100);
  p.add(EnergySpan{1000, 10000000}, 100);
  EXPECT_DOUBLE_EQ(p.joules, 4.0);
  EXPECT_EQ(p.ns, 20000000);
  EXPECT_EQ(p.tokens, 200);
  EXPECT_DOUBLE_EQ(*p.j_per_token(), 0.02);
  EXPECT_DOUBLE_EQ(*p.watts(), 200.0);       // 4 J over 20 ms
  EXPECT_DOUBLE_EQ(*p.mean_span_ms(), 10.0);
}

TEST(EnergyArithmetic, CaseEnergySumsRepetitionsAndChecksTheBounds) {
  const EnergyCalibration cal{5.0, 60.0};
  // Two repetitions: prefill 2 J over 10 ms each (200 W), decode 30 J over 100 ms (300 W).
  CaseEnergy e = case_energy({EnergySpan{2000, 10000000}, EnergySpan{2000, 10000000}},
                             {EnergySpan{30000, 100000000}, EnergySpan{30000, 100000000}},
                             /*prefill_tokens=*/512, /*decode_tokens=*/60, cal, 700.0);
  EXPECT_TRUE(e.metered);
  EXPECT_EQ(e.note, "");
  EXPECT_DOUBLE_EQ(*e.prefill.j_per_token(), 4.0 / 1024);
  EXPECT_DOUBLE_EQ(*e.decode.j_per_token(), 60.0 / 120);
  EXPECT_DOUBLE_EQ(*e.prefill.watts(), 200.0);
  EXPECT_DOUBLE_EQ(*e.decode.watts(), 300.0);
  EXPECT_EQ(energy_check(e), "ok");
  // Spans shorter than the counter's update, watts over the limit and under idle.
  e = case_energy({EnergySpan{100, 2000000}}, {EnergySpan{90000, 100000000}}, 8, 8,
                  EnergyCalibration{20.0, 60.0}, 700.0);
  EXPECT_EQ(energy_check(e), "prefill 2.0 ms per span < counter update 20.0 ms; prefill 50.0 W "
                             "< idle 60.0 W; decode 900.0 W > power limit 700.0 W");
  // Within the tolerance: 10% over the limit and 10% under idle pass.
  e = case_energy({EnergySpan{5400, 100000000}}, {EnergySpan{77000, 100000000}}, 8, 8,
                  EnergyCalibration{1.0, 60.0}, 700.0);
  EXPECT_EQ(energy_check(e), "ok");
  // A failed read leaves the phase out whole and says where.
  e = case_energy({EnergySpan{100, 20000000}, std::nullopt}, {}, 8, 0, cal, 700.0);
  EXPECT_EQ(e.prefill.spans, 0);
  EXPECT_FALSE(e.prefill.j_per_token());
  EXPECT_EQ(energy_check(e), "prefill: the energy counter could not be read in repetition 1");
  // Not metered: nothing, or the note.
  CaseEnergy none;
  EXPECT_FALSE(energy_check(none));
  none.note = "NVML unavailable: x";
  EXPECT_EQ(energy_check(none), "NVML unavailable: x");
}

TEST(EnergyMeter, CalibrationFindsTheUpdateAndIdlePowerOfTheFakeBoard) {
  // 100 W, updates every 5 ms: between two changes the counter gains 500 mJ per update. The
  // polling adds a sleep's overshoot to either change's time (a busy machine: milliseconds), so
  // the interval and the watts are bounded loosely; their product, the energy counted between
  // the two changes, is exactly a whole number of updates.
  const ScopedEnv env{{"LLMBENCH_FAKE_NVML_WATTS", "100"}, {"LLMBENCH_FAKE_NVML_UPDATE_MS", "5"},
                      {"LLMBENCH_FAKE_NVML_MJ_PER_READ", nullptr}};
  reset_fake();
  const Nvml nvml("", LLMBENCH_FAKE_NVML);
  ASSERT_TRUE(nvml.available());
  const EnergyCalibration c = nvml.meter().calibrate(std::chrono::milliseconds(2000));
  ASSERT_TRUE(c.update_ms);
  ASSERT_TRUE(c.idle_w);
  EXPECT_GT(*c.update_ms, 0.0);
  EXPECT_LT(*c.update_ms, 2000.0);
  const double mj = *c.idle_w * *c.update_ms;  // W x ms = mJ
  EXPECT_GE(mj, 500.0 - 1e-6);
  EXPECT_NEAR(std::remainder(mj, 500.0), 0.0, 1e-6) << mj;
}

TEST(EnergyMeter, CalibrationOfAStillCounterSaysSo) {
  const EnergyMeter still([] { return std::optional<std::uint64_t>(42); }, std::nullopt);
  const EnergyCalibration c = still.calibrate(std::chrono::milliseconds(20));
  EXPECT_FALSE(c.update_ms);
  EXPECT_FALSE(c.idle_w);
}

TEST(StepSpanEnergy, SpansCloseWhenLongEnoughOrIdleAndSkipIdleTime) {
  std::uint64_t mj = 0;
  const EnergyMeter meter([&] { return std::optional<std::uint64_t>(mj += 10); }, 300.0);
  // min_span 0: every step closes its span (reads: open 10, close 20; 30 (shared), ...).
  StepSpanEnergy spans(meter, std::chrono::nanoseconds(0));
  spans.before_step();        // reads 10
  spans.after_step(4, false);  // reads 20: span 10 mJ, 4 tokens; the next span opens at 20
  spans.before_step();        // open already: no read
  spans.after_step(4, true);   // reads 30: span 10 mJ; idle closes it
  mj += 1000;                  // energy while idle is not counted
  spans.before_step();        // reads 1040
  spans.after_step(2, true);   // reads 1050
  EXPECT_EQ(spans.total().spans, 3);
  EXPECT_DOUBLE_EQ(spans.total().joules, 0.03);
  EXPECT_EQ(spans.total().tokens, 10);
  EXPECT_DOUBLE_EQ(*spans.total().j_per_token(), 0.003);
  EXPECT_EQ(spans.failed_spans(), 0);
  // A long minimum span: steps accumulate into one span until the engine goes idle.
  StepSpanEnergy long_spans(meter, std::chrono::hours(1));
  long_spans.before_step();
  for (int i = 0; i < 5; ++i) long_spans.after_step(3, false);
  long_spans.after_step(3, true);
  EXPECT_EQ(long_spans.total().spans, 1);
  EXPECT_EQ(long_spans.total().tokens, 18);
  EXPECT_DOUBLE_EQ(long_spans.total().joules, 0.01);  // two reads, 10 mJ apart
}

// The tiny preset on the CPU backend with a meter over the fake counter (each read 5 mJ): the
// accounting inside run_case, the bench_case columns and the printed table, end to end.
TEST(EnergyEndToEnd, MeteredCaseIsAccountedStoredAndPrinted) {
  const ScopedEnv env{{"LLMBENCH_FAKE_NVML_MJ_PER_READ", "5"}, {"LLMBENCH_FAKE_NVML_LIMIT_W", "300"}};
  reset_fake();
  const Nvml nvml("", LLMBENCH_FAKE_NVML);
  ASSERT_TRUE(nvml.available()) << nvml.note();
  const EnergyMeter meter = nvml.meter();

  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  Model model(c, load_weights(c, RandomWeights(1), be), be);
  CaseSpec spec;
  spec.model = "tiny";
  spec.batch = 2;
  spec.prompt_len = 16;
  spec.max_new_tokens = 5;
  spec.warmup = 1;
  spec.repeat = 3;
  spec.trace = TraceLevel::kOff;
  const CaseResult r = run_case(model, spec, Peaks{10, 1, "t"}, std::chrono::steady_clock::now(),
                                nullptr, nullptr, &meter);
  ASSERT_EQ(r.status, "ok");
  ASSERT_TRUE(r.energy.metered);
  // Every phase of every measured repetition is one 5 mJ step of the counter (the prefill's
  // closing read opens the decode span).
  EXPECT_EQ(r.energy.prefill.spans, 3);
  EXPECT_EQ(r.energy.decode.spans, 3);
  EXPECT_DOUBLE_EQ(r.energy.prefill.joules, 0.015);
  EXPECT_DOUBLE_EQ(r.energy.decode.joules, 0.015);
  EXPECT_EQ(r.energy.prefill.tokens, 3 * 2 * 16);
  EXPECT_EQ(r.energy.decode.tokens, 3 * 2 * 4);
  EXPECT_DOUBLE_EQ(*r.energy.prefill.j_per_token(), 0.015 / 96);
  EXPECT_DOUBLE_EQ(*r.energy.decode.j_per_token(), 0.015 / 24);
  ASSERT_TRUE(r.energy.calibration.update_ms);
  EXPECT_EQ(r.energy.power_limit_w, 300.0);
  ASSERT_TRUE(energy_check(r.energy));

  // Stored: the columns hold what was computed.
  const fs::path dir = fs::path(LLMBENCH_TEST_SCRATCH) / "energy";
  fs::remove_all(dir);
  fs::create_directories(dir);
  ResultStore store((dir / "e.db").string());
  const std::int64_t run_id = store.begin_run(current_run_info());
  store.add_case(run_id, r, 0);
  auto q = store.db().prepare(
      "SELECT prefill_j_per_token, decode_j_per_token, prefill_w, decode_w, prefill_energy_j, "
      "decode_energy_ms, power_limit_w, energy_check, energy_update_ms FROM bench_case");
  ASSERT_TRUE(q.step());
  EXPECT_DOUBLE_EQ(q.column_double(0), *r.energy.prefill.j_per_token());
  EXPECT_DOUBLE_EQ(q.column_double(1), *r.energy.decode.j_per_token());
  EXPECT_DOUBLE_EQ(q.column_double(2), *r.energy.prefill.watts());
  EXPECT_DOUBLE_EQ(q.column_double(3), *r.energy.decode.watts());
  EXPECT_DOUBLE_EQ(q.column_double(4), 0.015);
  EXPECT_DOUBLE_EQ(q.column_double(5), double(r.energy.decode.ns) / 1e6);
  EXPECT_DOUBLE_EQ(q.column_double(6), 300.0);
  EXPECT_EQ(q.column_text(7), *energy_check(r.energy));
  EXPECT_FALSE(q.column_is_null(8));

  // Printed: the compact table shows the energy columns beside MBU when a case has them.
  std::ostringstream table;
  print_results(table, "table", {r}, Peaks{10, 1, "t"});
  const std::string head = table.str().substr(0, table.str().find('\n'));
  for (const char* col : {"prefill_j_per_token", "decode_j_per_token", "prefill_w", "decode_w"})
    EXPECT_NE(head.find(col), std::string::npos) << col << " in: " << head;
  EXPECT_LT(head.find("mbu"), head.find("prefill_j_per_token"));

  // A case without energy: no energy columns in the compact table, NULL in the database.
  CaseSpec plain = spec;
  plain.repeat = 1;
  const CaseResult u = run_case(model, plain, Peaks{10, 1, "t"}, std::chrono::steady_clock::now());
  EXPECT_FALSE(u.energy.metered);
  std::ostringstream plain_table;
  print_results(plain_table, "table", {u}, Peaks{10, 1, "t"});
  EXPECT_EQ(plain_table.str().find("j_per_token"), std::string::npos);
  store.add_case(run_id, u, 1);
  auto n = store.db().prepare("SELECT prefill_j_per_token IS NULL AND energy_check IS NULL "
                              "FROM bench_case WHERE case_index = 1");
  ASSERT_TRUE(n.step());
  EXPECT_EQ(n.column_int(0), 1);
}

// A CUDA case whose NVML is unavailable: the columns are NULL, energy_check carries the note,
// and the printed output says it once (however many cases).
TEST(EnergyEndToEnd, UnavailableNoteIsPrintedOnce) {
  CaseResult a, b;
  a.spec.model = b.spec.model = "tiny";
  a.spec.backend = b.spec.backend = "cuda";
  a.energy.note = b.energy.note = "NVML unavailable: libnvidia-ml.so.1 not found (x)";
  std::ostringstream out;
  print_results(out, "table", {a, b}, Peaks{10, 1, "t"});
  const std::string text = out.str();
  const std::size_t first = text.find("NVML unavailable");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find("NVML unavailable", first + 1), std::string::npos) << text;
  EXPECT_EQ(text.find("j_per_token"), std::string::npos);
}

// serve: the engine loop reads the meter around its busy step spans; the tokens of the spans
// are the tokens it generated; the session row gets the energy columns and the shutdown line.
TEST(ServeEnergy, EngineStepsAreMeteredStoredAndPrinted) {
  std::uint64_t mj = 0;
  std::mutex mu;  // the engine thread reads the counter
  const EnergyMeter meter([&] {
    std::lock_guard<std::mutex> lock(mu);
    return std::optional<std::uint64_t>(mj += 10);
  }, 300.0);
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  Model model(c, load_weights(c, RandomWeights(1), be), be);
  SchedulerOptions opt;
  opt.max_num_seqs = 4;
  std::optional<EngineLoop::Energy> got;
  {
    EngineLoop loop(model, opt, 16, std::chrono::steady_clock::now(), 0, TraceLevel::kOff, &meter);
    std::vector<std::shared_ptr<RequestStream>> streams;
    for (int i = 0; i < 3; ++i) {
      GenerationRequest r;
      r.prompt = {1, 2, 3, std::int32_t(4 + i)};
      r.max_tokens = 6;
      RequestId id = 0;
      streams.push_back(loop.submit(std::move(r), id));
      ASSERT_NE(streams.back(), nullptr);
    }
    for (auto& s : streams) {
      bool done = false;
      while (!done) {
        std::vector<StreamEvent> ev;
        s->wait(ev, std::chrono::milliseconds(1000));
        for (const StreamEvent& e : ev) done = done || e.finish != FinishReason::kNone;
      }
    }
    // The span closes after the step that leaves the engine idle, then energy() has it.
    for (int i = 0; i < 200 && (!loop.energy() || loop.energy()->busy.tokens < 18); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    got = loop.energy();
  }
  ASSERT_TRUE(got);
  EXPECT_EQ(got->busy.tokens, 3 * 6);
  EXPECT_GE(got->busy.spans, 1);
  EXPECT_EQ(got->failed_spans, 0);
  // Each span is its two reads apart: 10 mJ per span (busy spans share their boundary read).
  EXPECT_DOUBLE_EQ(got->busy.joules, 0.01 * got->busy.spans);

  ServeEnergy e;
  e.metered = true;
  e.calibration = EnergyCalibration{10.0, 50.0};
  e.power_limit_w = 300.0;
  e.spans = EngineLoop::Energy{PhaseEnergy{2.0, 10000000, 1, 100}, 0};  // 2 J over 10 ms: 200 W
  EXPECT_EQ(serve_energy_check(e), "ok");
  EXPECT_EQ(serve_energy_line(e),
            "serve: energy: 2.000 J over 0.010 s busy, 100 output tokens: 0.0200 J per output "
            "token, 200.0 W (counter update 10.0 ms, idle 50.0 W, limit 300.0 W); check: ok");
  const fs::path dir = fs::path(LLMBENCH_TEST_SCRATCH) / "serve_energy";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "s.db").string();
  {
    ResultStore s(db);
    s.db().exec("INSERT INTO serve_session (started_unix_ns, model) VALUES (1, 'tiny')");
    s.db().exec("INSERT INTO serve_session (started_unix_ns, model) VALUES (2, 'tiny')");
  }
  store_serve_energy(db, 1, e);
  ServeEnergy none;
  none.note = "NVML unavailable: libnvidia-ml.so.1 not found (x)";
  EXPECT_EQ(serve_energy_line(none), "serve: energy: " + none.note);
  store_serve_energy(db, 2, none);
  ResultStore s(db);
  auto q = s.db().prepare("SELECT energy_j, energy_ms, energy_output_tokens, j_per_output_token,"
                          " energy_w, power_limit_w, energy_note FROM serve_session ORDER BY id");
  ASSERT_TRUE(q.step());
  EXPECT_DOUBLE_EQ(q.column_double(0), 2.0);
  EXPECT_DOUBLE_EQ(q.column_double(1), 10.0);
  EXPECT_EQ(q.column_int(2), 100);
  EXPECT_DOUBLE_EQ(q.column_double(3), 0.02);
  EXPECT_DOUBLE_EQ(q.column_double(4), 200.0);
  EXPECT_DOUBLE_EQ(q.column_double(5), 300.0);
  EXPECT_EQ(q.column_text(6), "ok");
  ASSERT_TRUE(q.step());
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(q.column_is_null(i)) << i;
  EXPECT_EQ(q.column_text(6), none.note);
}

}  // namespace
}  // namespace llmbench
