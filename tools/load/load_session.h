// One `llmbench load` invocation's shared state, in the order it is set up: the server under
// test (--server-cmd), the model and the prompt form (a probe request), the load_run row and
// the streaming client. measure() runs one level (warm-up, measured requests with a live
// progress line, summary, one stored transaction); finish() prints the results, stops the
// server and picks the exit code (load_driver.h says which). The sweeps that decide which
// levels to run (the plan's list, or the SLO search of slo_sweep.h) sit above it.
#pragma once
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/load/load_client.h"
#include "tools/load/load_output.h"
#include "tools/load/load_plan.h"
#include "tools/load/load_store.h"
#include "tools/load/metrics_scrape.h"
#include "tools/load/server_process.h"
#include "tools/load/workload_level.h"

namespace llmbench {

class LoadSession {
 public:
  // Starts the server (if any), resolves the model, probes, begins the load_run row. Throws
  // BadInput for a server that cannot be reached or refuses the probe.
  LoadSession(const LoadPlan& plan, const std::string& command_line);
  ~LoadSession();
  LoadSession(const LoadSession&) = delete;
  LoadSession& operator=(const LoadSession&) = delete;

  // Runs `level` to its end and stores it (with the server's metrics when asked); `tag`
  // prefixes its progress lines ("[2/5]"); `sweep_role` is stored with it ("" for list sweeps).
  // nullopt when interrupted (nothing of the level is stored).
  std::optional<LevelResult> measure(const LevelSpec& level, const std::string& tag,
                                     const std::string& sweep_role = "");

  // Prints `results` (and `extra_line` after a table, e.g. the SLO frontier; `extra` in the
  // JSON run object), closes the run, stops the server; returns the exit code.
  int finish(const std::vector<LevelResult>& results, int planned_levels,
             const std::string& extra_line = "", const nlohmann::ordered_json& extra = {});

  bool interrupted() const { return interrupted_; }
  bool server_died() const { return !server_died_.empty(); }
  void note(const std::string& line) const;
  std::int64_t run_id() const { return run_id_; }
  LoadStore& store() { return *store_; }
  // Requests one arrival brings: a multi-turn workload's mean turns per session (its arrival
  // rate counts sessions), else 1.
  double requests_per_arrival() const;
  // The base URL (http://host:port) of the server under test.
  const std::string& base_url() const { return base_; }

 private:
  void start_server();
  bool warm_up(const LevelSpec& level, const LevelDrive& drive);  // false: interrupted
  LevelResult record(const LevelSpec& level, const LevelOutcome& outcome,
                     const std::optional<ScrapeLog>& scraped, const std::string& tag,
                     const std::string& sweep_role);
  nlohmann::ordered_json run_json() const;

  const LoadPlan& plan_;
  const LoadOptions& o_;
  std::string command_line_;
  bool chat_ = false, token_ids_ = true;
  std::unique_ptr<FileWorkload> file_;  // --dataset-name other than random
  std::unique_ptr<ServerProcess> server_;
  std::string url_, server_cmd_, base_, model_, api_key_, metrics_url_;
  std::unique_ptr<LoadStore> store_;
  LoadRunInfo info_;
  std::int64_t run_id_ = 0;
  // X-Request-Id of this invocation's requests: "<id_tag_>-<level>-<index>", 16 random hex
  // digits making them unique across runs (docs/serving.md, "Request ids").
  std::string id_tag_;
  std::unique_ptr<LoadClient> client_;
  bool interrupted_ = false;
  std::string store_failed_;  // why storing a level failed (then nothing more is stored)
  // --server-metrics: series kept so far this run, and the cap (a server that invents a new
  // series per scrape made 100 MB of tracks in a 2 s level).
  static constexpr std::size_t kMaxServerSeriesPerRun = 5000;
  std::size_t series_kept_ = 0;
  std::string server_died_;
  std::chrono::steady_clock::time_point sweep_start_ = std::chrono::steady_clock::now();
};

}  // namespace llmbench
