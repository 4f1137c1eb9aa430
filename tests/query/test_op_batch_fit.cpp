// queries/op_batch_fit.sql on a database whose traces have known timings, written through the
// real store (ResultStore::add_case): an op whose prefill time is exactly 2 ms + 0.5 ms x batch
// (over two calls per prefill) fits slope 0.5, intercept 2, r^2 1; a noisy op fits the slope,
// intercept and r^2 computed here independently (deviations from the means); each variants
// series is fitted on its own; decode-phase events and range events never count; the TTFT
// share divides by the traced prefill at the largest batch; max_new_tokens filters cases.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "tools/query/bundled_queries.h"
#include "tools/query/query_runner.h"
#include "tools/store/store.h"
#include "tools/store/variants_json.h"

namespace llmbench {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kMs = 1000000;  // ns

OpRecord record(const char* name, OpCategory cat, Phase phase, int depth, int parent,
                std::int64_t dur_ns) {
  OpRecord r;
  r.name = name;
  r.category = cat;
  r.phase = phase;
  r.step = phase == Phase::kPrefill ? 0 : 1;
  r.depth = depth;
  r.parent = parent;
  r.dur_ns = dur_ns;
  return r;
}

// A traced case of `batch` sequences whose prefill holds "permute_q" (two calls adding up to
// linear_ms) and "noisy" (noisy_ms), inside a prefill range of ttft_ms.
CaseResult traced_case(int batch, int max_new_tokens, const Variants& v, double linear_ms,
                       double noisy_ms, double ttft_ms) {
  CaseResult c;
  c.spec.model = "tiny";
  c.spec.batch = batch;
  c.spec.prompt_len = 400;
  c.spec.max_new_tokens = max_new_tokens;
  c.spec.variants = v;
  const auto ns = [](double ms) { return std::int64_t(std::llround(ms * kMs)); };
  c.trace.push_back(record("prefill", OpCategory::kRange, Phase::kPrefill, 0, -1, ns(ttft_ms)));
  c.trace.push_back(record("layer", OpCategory::kRange, Phase::kPrefill, 1, 0, ns(ttft_ms) / 2));
  const auto copy = OpCategory::kCopy;
  c.trace.push_back(record("permute_q", copy, Phase::kPrefill, 2, 1, ns(0.4 * linear_ms)));
  c.trace.push_back(record("permute_q", copy, Phase::kPrefill, 1, 0, ns(0.6 * linear_ms)));
  c.trace.push_back(record("noisy", OpCategory::kGemm, Phase::kPrefill, 1, 0, ns(noisy_ms)));
  if (max_new_tokens > 1) {  // a decode step whose ops must not count
    c.trace.push_back(record("decode_step", OpCategory::kRange, Phase::kDecode, 0, -1, 1000 * kMs));
    c.trace.push_back(record("permute_q", OpCategory::kCopy, Phase::kDecode, 1, 5, 900 * kMs));
  }
  return c;
}

struct Fit {
  double slope, intercept, r2;
};

// Least squares from deviations about the means: another formula than the query's sums.
Fit least_squares(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i] / x.size(), my += y[i] / y.size();
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return {sxy / sxx, my - sxy / sxx * mx, sxy * sxy / (sxx * syy)};
}

class OpBatchFit : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = fs::path(LLMBENCH_TEST_SCRATCH) / "query" /
            ("op_batch_fit_" + std::to_string(::getpid()) + ".db");
    fs::create_directories(path_.parent_path());
    fs::remove(path_);
    ResultStore store(path_.string());
    RunInfo info = current_run_info();
    info.command_line = "test";
    const std::int64_t run = store.begin_run(info);
    Variants naive;
    naive.qkv = QkvLayout::kPermute;
    for (std::size_t i = 0; i < kBatches.size(); ++i) {
      const int b = kBatches[i];
      store.add_case(run, traced_case(b, 1, Variants{}, 2 + 0.5 * b, kNoisy[i], 10 * b));
      store.add_case(run, traced_case(b, 1, naive, 1 + 3.0 * b, kNoisy[i], 20 * b));
    }
    // max_new_tokens 4, batch 16: in the fit only when max_new_tokens is not filtered.
    store.add_case(run, traced_case(16, 4, Variants{}, 2 + 0.5 * 16, 7.0, 160));
  }
  static void TearDownTestSuite() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }

  // Rows of op_batch_fit keyed by "variants|name".
  static std::map<std::string, std::map<std::string, SqlValue>> run(
      const std::map<std::string, std::string>& params) {
    const BundledQuery* q = find_bundled_query("op_batch_fit");
    EXPECT_NE(q, nullptr);
    if (!q) return {};
    auto db = open_query_db(path_.string());
    const QueryResult r = run_query(*db, {"query 'op_batch_fit'", std::string(q->sql), q->header},
                                    params);
    std::map<std::string, std::map<std::string, SqlValue>> out;
    for (const auto& row : r.rows) {
      std::map<std::string, SqlValue> named;
      for (std::size_t i = 0; i < row.size(); ++i) named[r.columns[i]] = row[i];
      out[std::get<std::string>(named["variants"].v) + "|" +
          std::get<std::string>(named["name"].v)] = named;
    }
    return out;
  }

  static double real(const SqlValue& v) {
    if (const auto* d = std::get_if<double>(&v.v)) return *d;
    if (const auto* i = std::get_if<std::int64_t>(&v.v)) return double(*i);
    ADD_FAILURE() << "not a number: " << v.to_sql();
    return NAN;
  }

  static inline const std::vector<int> kBatches = {1, 2, 4, 8};
  static inline const std::vector<double> kNoisy = {1.0, 3.0, 2.0, 5.0};
  static inline fs::path path_;
};

TEST_F(OpBatchFit, ExactLineGivesItsSlopeInterceptAndUnitR2) {
  const auto rows = run({{"max_new_tokens", "1"}});
  ASSERT_EQ(rows.size(), 4u);  // two ops x two variants; ranges never appear
  const std::string fast = variants_label(Variants{});
  const auto& r = rows.at(fast + "|permute_q");
  EXPECT_NEAR(real(r.at("slope_us_per_seq")) / 1e3, 0.5, 1e-9);
  EXPECT_NEAR(real(r.at("intercept_us")) / 1e3, 2.0, 1e-9);
  EXPECT_NEAR(real(r.at("r2")), 1.0, 1e-9);
  EXPECT_EQ(real(r.at("batches")), 4);
  EXPECT_EQ(real(r.at("max_batch")), 8);
  EXPECT_NEAR(real(r.at("us_at_max_batch")) / 1e3, 6.0, 1e-9);
  EXPECT_NEAR(real(r.at("ttft_share_at_max_batch")), 6.0 / 80.0, 1e-9);
  EXPECT_EQ(std::get<std::string>(r.at("category").v), "copy");
}

TEST_F(OpBatchFit, NoisyPointsMatchAnIndependentFit) {
  const auto rows = run({{"max_new_tokens", "1"}});
  const Fit want = least_squares({1, 2, 4, 8}, kNoisy);
  const auto& r = rows.at(variants_label(Variants{}) + "|noisy");
  EXPECT_NEAR(real(r.at("slope_us_per_seq")) / 1e3, want.slope, 1e-9);
  EXPECT_NEAR(real(r.at("intercept_us")) / 1e3, want.intercept, 1e-9);
  EXPECT_NEAR(real(r.at("r2")), want.r2, 1e-9);
  EXPECT_LT(want.r2, 0.9);  // the data really is noisy
}

TEST_F(OpBatchFit, EachVariantsSeriesIsFittedAloneAndTheSteepestComesFirst) {
  const auto rows = run({{"max_new_tokens", "1"}});
  Variants naive;
  naive.qkv = QkvLayout::kPermute;
  const auto& r = rows.at(variants_label(naive) + "|permute_q");
  EXPECT_NEAR(real(r.at("slope_us_per_seq")) / 1e3, 3.0, 1e-9);
  EXPECT_NEAR(real(r.at("intercept_us")) / 1e3, 1.0, 1e-9);
  EXPECT_NEAR(real(r.at("ttft_share_at_max_batch")), 25.0 / 160.0, 1e-9);
  // Ordered by slope: the naive permute first.
  auto db = open_query_db(path_.string());
  const BundledQuery* q = find_bundled_query("op_batch_fit");
  const QueryResult all = run_query(*db, {"q", std::string(q->sql), q->header},
                                    {{"max_new_tokens", "1"}});
  ASSERT_FALSE(all.rows.empty());
  EXPECT_NEAR(real(all.rows[0][10]) / 1e3, 3.0, 1e-9);  // slope_us_per_seq (ms * 1e3)
  for (std::size_t i = 1; i < all.rows.size(); ++i)
    EXPECT_GE(real(all.rows[i - 1][10]), real(all.rows[i][10]));
}

TEST_F(OpBatchFit, WithoutTheFilterEveryCasesPrefillCountsAndDecodeNeverDoes) {
  const auto rows = run({});
  const auto& r = rows.at(variants_label(Variants{}) + "|permute_q");
  // Batch 16 joins the same line (its decode-phase 900 ms permute is ignored).
  EXPECT_EQ(real(r.at("batches")), 5);
  EXPECT_EQ(real(r.at("max_batch")), 16);
  EXPECT_NEAR(real(r.at("slope_us_per_seq")) / 1e3, 0.5, 1e-9);
  EXPECT_NEAR(real(r.at("intercept_us")) / 1e3, 2.0, 1e-9);
  EXPECT_NEAR(real(r.at("ttft_share_at_max_batch")), 10.0 / 160.0, 1e-9);
}

}  // namespace
}  // namespace llmbench
