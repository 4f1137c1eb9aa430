// `llmbench load`'s operations side against scripted loopback servers: the SLO frontier search
// finds the known knee of a server whose first-token latency jumps when the arrival rate
// passes it, and --server-metrics stores every scraped sample as counter tracks while a
// malformed /metrics line is refused on its own (the level still succeeds), and
// load_latency_vs_server lines requests up with the queue they met. Every server listens on
// 127.0.0.1 on an ephemeral port, every sleep is bounded, and each test stops its server.
#include <httplib.h>
#include <sys/socket.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "tools/load/load_driver.h"
#include "tools/query/bundled_queries.h"
#include "tools/query/query_runner.h"
#include "tools/store/sqlite_db.h"

namespace llmbench {
namespace {

using Clock = std::chrono::steady_clock;

// Streams `tokens` tokens per request. The first comes after `fast` while the arrival rate
// (over the last 8 arrival gaps) is at or below `knee_rps`, after `slow` above it. /metrics
// reports the requests in flight, a labelled gauge with escapes, and two malformed lines.
class KneeServer {
 public:
  KneeServer(double knee_rps, std::chrono::milliseconds fast, std::chrono::milliseconds slow)
      : knee_(knee_rps), fast_(fast), slow_(slow) {
    http_.new_task_queue = [] { return new httplib::ThreadPool(64); };
    http_.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res);
    });
    http_.Get("/health", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{}", "application/json");
    });
    http_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      ++scrapes_;
      res.set_content(
          "# HELP llmbench_requests_running Requests in flight.\n"
          "# TYPE llmbench_requests_running gauge\n"
          "llmbench_requests_running " + std::to_string(in_flight_.load()) + "\n"
          "# TYPE vllm:num_requests_waiting gauge\n"
          "vllm:num_requests_waiting{model_name=\"fake \\\"q\\\"\"} 0\n"
          "this line is not a metric\n"
          "bad_value{} abc\n",
          "text/plain; version=0.0.4");
    });
    // A burst of connects (the all-at-once level) overflows cpp-httplib's backlog of 5; raise
    // it after bind, as tests/load/scripted_server.h does.
    http_.set_socket_options([this](socket_t sock) {
      httplib::default_socket_options(sock);
      listen_fd_ = sock;
    });
    port_ = http_.bind_to_any_port("127.0.0.1");
    if (listen_fd_ >= 0) ::listen(listen_fd_, 4096);
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    for (int i = 0; i < 500 && !http_.is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~KneeServer() {
    stopping_ = true;
    http_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int scrapes() const { return scrapes_; }

 private:
  void handle(const httplib::Request& req, httplib::Response& res) {
    const auto body = nlohmann::json::parse(req.body, nullptr, false);
    if (!body.is_object() || !body.value("stream", false)) {  // the probe
      res.set_content(R"({"choices":[{"index":0,"text":"x","finish_reason":"length"}]})",
                      "application/json");
      return;
    }
    bool over = false;
    {
      std::lock_guard lock(mu_);
      arrivals_.push_back(Clock::now());
      if (arrivals_.size() > 9) arrivals_.pop_front();
      if (arrivals_.size() >= 2) {
        const double span_s =
            std::chrono::duration<double>(arrivals_.back() - arrivals_.front()).count();
        over = span_s <= 0 || double(arrivals_.size() - 1) / span_s > knee_;
      }
    }
    const auto delay = over ? slow_ : fast_;
    ++in_flight_;
    res.set_chunked_content_provider(
        "text/event-stream", [this, delay, i = 0](std::size_t, httplib::DataSink& sink) mutable {
          if (i == 0) {
            const auto end = Clock::now() + delay;
            while (!stopping_ && Clock::now() < end)
              std::this_thread::sleep_for(std::chrono::milliseconds(2));
          }
          if (i < 2) {
            ++i;
            const std::string c = R"(data: {"choices":[{"index":0,"text":"x","token_ids":[7]}]})"
                                  "\n\n";
            return sink.write(c.data(), c.size());
          }
          const std::string tail =
              "data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"length\"}],"
              "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n";
          sink.write(tail.data(), tail.size());
          sink.done();
          --in_flight_;
          return true;
        });
  }

  double knee_;
  std::chrono::milliseconds fast_, slow_;
  httplib::Server http_;
  int port_ = 0;
  int listen_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> in_flight_{0}, scrapes_{0};
  std::mutex mu_;
  std::deque<Clock::time_point> arrivals_;
};

std::string fresh_db(const std::string& name) {
  const std::string dir = std::string(LLMBENCH_TEST_SCRATCH) + "/load_ops";
  std::filesystem::create_directories(dir);
  const std::string db = dir + "/" + name;
  std::filesystem::remove(db);
  return db;
}

// The knee is 40 req/s; the SLO (TTFT <= 100 ms) holds below it (5 ms) and not above (250 ms).
// Nearly regular arrivals (burstiness 1000) keep the server's rate estimate close to the
// offered rate, so the search must end within its tolerance (10%) below the knee, allowing
// for the estimate's own spread (a few percent) and the 0.9 target.
TEST(LoadSloSweep, FindsTheKneeOfAServerWhoseLatencyGrowsWithRate) {
  KneeServer server(40.0, std::chrono::milliseconds(5), std::chrono::milliseconds(250));
  const std::string db = fresh_db("slo.db");
  LoadOptions o;
  o.url = server.url();
  o.model = "fake";
  o.sweep = "slo";
  o.goodput = "ttft:100";
  o.burstiness = "1000";
  o.num_requests = 30;
  o.input_len = "8";
  o.output_len = "2";
  o.db = db;
  o.quiet = true;
  o.format = "json";
  const auto t0 = Clock::now();
  EXPECT_EQ(run_load(o, "test slo"), 0);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 60.0);

  Db d(db, Db::Mode::kReadOnly);
  auto run = d.prepare("SELECT sweep, goodput_target, slo_frontier_rate, status FROM load_run");
  ASSERT_TRUE(run.step());
  EXPECT_EQ(run.column_text(0), "slo");
  EXPECT_DOUBLE_EQ(run.column_double(1), 0.9);
  const double frontier = run.column_double(2);
  EXPECT_EQ(run.column_text(3), "complete");
  EXPECT_GE(frontier, 40.0 * 0.9 * 0.9) << "frontier " << frontier;
  EXPECT_LE(frontier, 40.0 * 1.05) << "frontier " << frontier;
  // Every level is stored with its role and good fraction: the throughput level first.
  auto lv = d.prepare("SELECT sweep_role, request_rate, good_fraction FROM load_level ORDER BY level_index");
  int levels = 0;
  double lowest_failed = 1e300;
  while (lv.step()) {
    if (levels == 0) {
      EXPECT_EQ(lv.column_text(0), "throughput");
      EXPECT_TRUE(std::isinf(lv.column_double(1)));
    } else {
      EXPECT_EQ(lv.column_text(0), "probe");
      if (lv.column_double(2) < 0.9 && lv.column_double(1) > frontier)
        lowest_failed = std::min(lowest_failed, lv.column_double(1));
    }
    ++levels;
  }
  EXPECT_GE(levels, 4);
  EXPECT_LE(levels, 10);
  EXPECT_LE(lowest_failed - frontier, 0.1 * lowest_failed + 1e-9);
}

// Writes `lines` to a fresh file under the scratch directory and returns its path.
std::string write_dataset(const std::string& name, const std::vector<std::string>& lines) {
  const std::string path = fresh_db(name);
  std::ofstream f(path);
  for (const std::string& l : lines) f << l << "\n";
  return path;
}

// --sweep slo against `server` over a jsonl file of `lines` (written as NAME.jsonl), storing
// into NAME.db, quiet, JSON on stdout.
LoadOptions slo_over_jsonl(const KneeServer& server, const std::string& name,
                           const std::vector<std::string>& lines, const std::string& goodput) {
  LoadOptions o;
  o.url = server.url();
  o.model = "fake";
  o.sweep = "slo";
  o.goodput = goodput;
  o.dataset_name = "jsonl";
  o.dataset_path = write_dataset(name + ".jsonl", lines);
  o.db = fresh_db(name + ".db");
  o.quiet = true;
  o.format = "json";
  return o;
}

// The search over a dataset (30 single-turn jsonl requests) finds the same knee as over random
// prompts: every level sends the file's requests, as rate levels of that dataset.
TEST(LoadSloSweep, SearchesADatasetWorkload) {
  KneeServer server(40.0, std::chrono::milliseconds(5), std::chrono::milliseconds(250));
  std::vector<std::string> lines;
  for (int i = 0; i < 30; ++i)
    lines.push_back(R"({"prompt": "request )" + std::to_string(i) + R"(", "max_tokens": 2})");
  LoadOptions o = slo_over_jsonl(server, "slo_dataset", lines, "ttft:100");
  o.burstiness = "1000";
  EXPECT_EQ(run_load(o, "test slo dataset"), 0);

  Db d(o.db, Db::Mode::kReadOnly);
  auto run = d.prepare("SELECT sweep, slo_frontier_rate, dataset_name FROM load_run");
  ASSERT_TRUE(run.step());
  EXPECT_EQ(run.column_text(0), "slo");
  const double frontier = run.column_double(1);
  EXPECT_EQ(run.column_text(2), "jsonl");
  EXPECT_GE(frontier, 40.0 * 0.9 * 0.9) << "frontier " << frontier;
  EXPECT_LE(frontier, 40.0 * 1.05) << "frontier " << frontier;
  auto lv = d.prepare("SELECT level, requests FROM load_level ORDER BY level_index");
  int levels = 0;
  while (lv.step()) {
    EXPECT_NE(lv.column_text(0).find("jsonl"), std::string::npos) << lv.column_text(0);
    EXPECT_EQ(lv.column_int(1), 30);
    ++levels;
  }
  EXPECT_GE(levels, 4);
}

// A multi-turn dataset's rate counts sessions: the first probe offers the throughput level's
// request throughput divided by the mean turns per session (here 2), in sessions/s.
TEST(LoadSloSweep, MultiTurnRatesCountSessions) {
  // All at once is over the knee (TTFT 1.2 s > 1 s): the search goes on to probe rates.
  KneeServer server(20.0, std::chrono::milliseconds(2), std::chrono::milliseconds(1200));
  std::vector<std::string> lines;
  for (int i = 0; i < 6; ++i)
    for (int t = 0; t < 2; ++t)
      lines.push_back(R"({"session_id": "s)" + std::to_string(i) + R"(", "prompt": "turn )" +
                      std::to_string(t) + R"(", "max_tokens": 2})");
  LoadOptions o = slo_over_jsonl(server, "slo_sessions", lines, "ttft:1000");
  o.sweep_max_levels = 3;
  EXPECT_EQ(run_load(o, "test slo sessions"), 0);

  Db d(o.db, Db::Mode::kReadOnly);
  auto lv = d.prepare("SELECT request_rate, ok, duration_ns, requests FROM load_level "
                      "ORDER BY level_index");
  ASSERT_TRUE(lv.step());
  EXPECT_TRUE(std::isinf(lv.column_double(0)));
  EXPECT_EQ(lv.column_int(3), 12);  // 6 sessions of 2 turns
  const double request_throughput = lv.column_int(1) / (lv.column_double(2) / 1e9);
  ASSERT_TRUE(lv.step());
  EXPECT_NEAR(lv.column_double(0), request_throughput / 2, 1e-6 * request_throughput);
}

TEST(LoadServerMetrics, ScrapedSamplesBecomeCounterTracksAndMalformedLinesAreRefused) {
  KneeServer server(1e9, std::chrono::milliseconds(80), std::chrono::milliseconds(80));
  const std::string db = fresh_db("metrics.db");
  LoadOptions o;
  o.url = server.url();
  o.model = "fake";
  o.concurrency = "3";
  o.num_requests = 12;
  o.input_len = "8";
  o.output_len = "2";
  o.server_metrics = "auto";
  o.metrics_interval_ms = 50;
  o.db = db;
  o.quiet = true;
  o.format = "jsonl";
  EXPECT_EQ(run_load(o, "test metrics"), 0);
  EXPECT_GE(server.scrapes(), 3);

  Db d(db, Db::Mode::kReadOnly);
  auto lv = d.prepare("SELECT metrics_scrapes, metrics_failed_scrapes, metrics_rejected_lines,"
                      " metrics_first_problem, metrics_url FROM load_level");
  ASSERT_TRUE(lv.step());
  const int scrapes = int(lv.column_int(0));
  EXPECT_GE(scrapes, 3);
  EXPECT_EQ(lv.column_int(1), 0);
  EXPECT_EQ(lv.column_int(2), 2 * scrapes);  // two malformed lines in every scrape
  EXPECT_NE(lv.column_text(3).find("line 6"), std::string::npos) << lv.column_text(3);
  EXPECT_EQ(lv.column_text(4), server.url() + "/metrics");
  auto tracks = d.prepare("SELECT t.name, t.metric_type, COUNT(c.id), MAX(c.value) FROM track t"
                          " JOIN counter c ON c.track_id = t.id WHERE t.type = 'counter'"
                          " AND t.load_level_id IS NOT NULL GROUP BY t.id ORDER BY t.name");
  ASSERT_TRUE(tracks.step());
  EXPECT_EQ(tracks.column_text(0), "llmbench_requests_running");
  EXPECT_EQ(tracks.column_text(1), "gauge");
  EXPECT_EQ(tracks.column_int(2), scrapes);
  EXPECT_GE(tracks.column_double(3), 1.0);  // some scrape saw requests in flight
  ASSERT_TRUE(tracks.step());
  EXPECT_EQ(tracks.column_text(0), "vllm:num_requests_waiting{model_name=\"fake \\\"q\\\"\"}");
  EXPECT_FALSE(tracks.step());

  // The bundled query: every request, and those sent after the first scrape see its values.
  auto qdb = open_query_db(db);
  const BundledQuery* q = find_bundled_query("load_latency_vs_server");
  ASSERT_NE(q, nullptr);
  const QueryResult r = run_query(*qdb, QuerySource{"query", std::string(q->sql), q->header}, {});
  ASSERT_EQ(r.rows.size(), 12u);
  int with_sample = 0;
  const auto col = [&](const char* name) {
    return std::size_t(std::find(r.columns.begin(), r.columns.end(), name) - r.columns.begin());
  };
  for (const auto& row : r.rows) {
    if (!row[col("running")].is_null()) {
      ++with_sample;
      EXPECT_FALSE(row[col("waiting")].is_null());
      EXPECT_GE(std::get<double>(row[col("sample_age_ms")].v), 0.0);
    }
  }
  EXPECT_GE(with_sample, 6);
}

}  // namespace
}  // namespace llmbench
