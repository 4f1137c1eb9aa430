// The serving tables' writer for `llmbench serve --db` (docs/schema.md, "Serving tables"): one
// serve_session row per run of the server, its engine steps (serve_step) and its finished
// requests (serve_request), in the one llmbench schema (tools/store/schema.h). The database is
// opened and validated when the server starts; rows are stored as they happen: the engine
// thread queues each step and each finished request (never waiting on SQLite), and a writer
// thread commits what is queued at most every `commit_interval` in one transaction, so a
// server killed with SIGKILL loses at most that interval. A commit that fails (another process
// holds the database lock, a full disk, an I/O error) keeps its rows and is tried again at the
// next interval, with one line on stderr when it starts failing and one when storing resumes;
// while it fails at most `max_backlog_rows` rows wait, and rows beyond them are dropped and
// counted (the resume line and the final totals say how many). Serving goes on throughout.
// Not here: the engine (engine_loop.h) or HTTP (server.h).
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/serving/scheduler.h"
#include "tools/serve/engine_loop.h"
#include "tools/store/store.h"

namespace llmbench {

struct ServeSessionInfo {
  std::string command_line;
  std::string model, dtype, backend, device;
  std::int64_t started_unix_ns = 0;  // wall clock at the engine's origin
  SchedulerOptions scheduler;        // as resolved (pool size, limits)
  int kv_blocks = 0;
};

class ServeStore : public EngineLog {
 public:
  // Opens (or creates) the database and brings it to the current schema. Throws BadInput for
  // a path that cannot be opened or created, a file that is not an SQLite database, one that
  // is not llmbench's, one with a newer schema, or one that cannot be written (a full disk).
  explicit ServeStore(const std::string& path,
                      std::chrono::milliseconds commit_interval = std::chrono::milliseconds(500),
                      std::size_t max_backlog_rows = 200000,
                      std::chrono::milliseconds busy_timeout = std::chrono::milliseconds(2000));
  ~ServeStore() override;  // commits what is queued and stops the writer

  // Inserts the session row (at once) and starts the writer; returns the session id. Throws
  // BadInput when the row cannot be written for want of space.
  std::int64_t begin_session(const ServeSessionInfo& info);
  // EngineLog: queue one row each; called on the engine thread.
  void on_step(const StepStats& step) override;
  void on_request(const ServedRequest& request) override;
  // Commits what is queued and stops the writer (idempotent).
  void close();

  struct Totals {
    std::int64_t steps = 0, requests = 0;  // rows committed
    std::int64_t dropped = 0;              // rows dropped while commits failed (backlog full)
    bool failed = false;                   // the last commit failed (rows were left unstored)
  };
  Totals totals() const;
  const std::string& path() const { return path_; }

 private:
  void insert_session(const ServeSessionInfo& info);
  void run();
  // Writes `steps` and `requests` in one transaction; the reason when it fails.
  std::optional<std::string> commit(const std::vector<StepStats>& steps,
                                    const std::vector<ServedRequest>& requests);
  // A row may join the queue (the backlog is not full); counts it dropped otherwise.
  bool admit_row();

  std::string path_;
  std::unique_ptr<ResultStore> store_;
  std::chrono::milliseconds interval_;
  std::size_t max_backlog_;
  std::int64_t session_ = 0;
  std::thread writer_;
  mutable std::mutex mu_;  // everything below
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<StepStats> steps_;
  std::vector<ServedRequest> requests_;
  Totals totals_;
};

}  // namespace llmbench
