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
// With `serve --trace steps|ops` the session also gets a trace track: each step's requests
// (serve_step_request) and its op records (EngineLog::on_trace) as events, as `run` stores its
// traced repetition (event.step = serve_step.step; docs/serving.md, "Tracing a server").
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
  TraceLevel trace = TraceLevel::kOff;  // --trace
  std::int64_t pid = 0;                 // the trace's process (the server's pid)
  std::string cpu_isa;  // CPU backend: cpu::cpu_dispatch_description(); "" elsewhere (NULL)
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
  void on_trace(std::vector<OpRecord>&& records) override;
  // Commits what is queued and stops the writer (idempotent).
  void close();

  struct Totals {
    std::int64_t steps = 0, requests = 0;  // rows committed
    std::int64_t events = 0;               // trace events committed
    std::int64_t dropped = 0;              // rows dropped while commits failed (backlog full)
    bool failed = false;                   // the last commit failed (rows were left unstored)
  };
  Totals totals() const;
  const std::string& path() const { return path_; }

 private:
  void insert_session(const ServeSessionInfo& info);
  void run();
  // What waits to be committed; a trace batch's parents index into that batch.
  struct Pending {
    std::vector<StepStats> steps;
    std::vector<ServedRequest> requests;
    std::vector<std::vector<OpRecord>> traces;
    std::size_t trace_rows = 0;
    std::size_t rows() const { return steps.size() + requests.size() + trace_rows; }
    bool empty() const { return rows() == 0; }
    // Appends `later` behind these rows.
    void append(Pending&& later);
    // Drops rows from the back (trace batches first) until at most `n` are left; how many went.
    std::size_t trim_to(std::size_t n);
  };
  // Writes `p` in one transaction; the reason when it fails.
  std::optional<std::string> commit(const Pending& p);
  // `n` rows may join the queue (the backlog has room); counts them dropped otherwise.
  bool admit_rows(std::size_t n);

  std::string path_;
  std::unique_ptr<ResultStore> store_;
  std::chrono::milliseconds interval_;
  std::size_t max_backlog_;
  std::int64_t session_ = 0;
  TraceLevel trace_ = TraceLevel::kOff;
  std::int64_t track_ = 0;  // the session's trace track (trace steps|ops)
  std::thread writer_;
  mutable std::mutex mu_;  // everything below
  std::condition_variable cv_;
  bool stop_ = false;
  Pending pending_;
  Totals totals_;
};

}  // namespace llmbench
