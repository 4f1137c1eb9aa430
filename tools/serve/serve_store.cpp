// Writing the serving tables as the server runs (see serve_store.h). Times are integer ns since
// the session's origin (the server's start, steady_clock), as every llmbench trace time is.
#include "tools/serve/serve_store.h"

#include <fmt/core.h>

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <exception>

#include "kernels/common/error.h"

namespace llmbench {

namespace {

void bind_time(Stmt& s, int i, std::int64_t ns) {
  if (ns < 0) s.bind_null(i); else s.bind(i, ns);
}

// A database that cannot be written at start-up (creating the schema, or the session row, on
// a full disk) is refused like a bad path: one line, exit 2.
[[noreturn]] void refuse_unwritable(const std::string& path, const std::exception& e) {
  if (const auto reason = write_failure_reason(e))
    throw BadInput("database '" + path + "': cannot store the serving tables (" + *reason + ")");
  throw;
}

}  // namespace

ServeStore::ServeStore(const std::string& path, std::chrono::milliseconds commit_interval,
                       std::size_t max_backlog_rows, std::chrono::milliseconds busy_timeout)
    : path_(path), interval_(commit_interval), max_backlog_(std::max<std::size_t>(1, max_backlog_rows)) {
  try {
    store_ = std::make_unique<ResultStore>(path);
  } catch (const BadInput&) {
    throw;
  } catch (const std::exception& e) {
    refuse_unwritable(path, e);
  }
  // The writer retries every interval anyway: waiting long on a lock only delays the retry.
  sqlite3_busy_timeout(store_->db().handle(), int(busy_timeout.count()));
}

ServeStore::~ServeStore() { close(); }

std::int64_t ServeStore::begin_session(const ServeSessionInfo& info) {
  try {
    insert_session(info);
  } catch (const std::exception& e) {
    refuse_unwritable(path_, e);
  }
  writer_ = std::thread([this] { run(); });
  return session_;
}

void ServeStore::insert_session(const ServeSessionInfo& info) {
  Db& db = store_->db();
  auto s = db.prepare(
      "INSERT INTO serve_session (started_unix_ns, command_line, model, dtype, backend, device,"
      " max_num_seqs, max_num_batched_tokens, chunked_prefill, kv_block_size, kv_blocks,"
      " prefix_caching) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind(1, info.started_unix_ns).bind(2, info.command_line).bind(3, info.model)
      .bind(4, info.dtype).bind(5, info.backend).bind(6, info.device)
      .bind(7, info.scheduler.max_num_seqs).bind(8, info.scheduler.max_num_batched_tokens)
      .bind(9, info.scheduler.chunked_prefill ? 1 : 0).bind(10, info.scheduler.block_size)
      .bind(11, info.kv_blocks).bind(12, info.scheduler.prefix_caching ? 1 : 0)
      .run();
  session_ = db.last_insert_id();
}

bool ServeStore::admit_row() {
  if (steps_.size() + requests_.size() < max_backlog_) return true;
  ++totals_.dropped;
  return false;
}

void ServeStore::on_step(const StepStats& step) {
  std::lock_guard<std::mutex> lock(mu_);
  if (admit_row()) steps_.push_back(step);
}

void ServeStore::on_request(const ServedRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (admit_row()) requests_.push_back(request);
}

void ServeStore::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

ServeStore::Totals ServeStore::totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return totals_;
}

void ServeStore::run() {
  std::vector<StepStats> steps;
  std::vector<ServedRequest> requests;
  std::int64_t dropped_before = 0;  // totals_.dropped when the failing began
  auto failing_since = std::chrono::steady_clock::time_point{};
  for (;;) {
    bool last = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Waits the whole interval (not woken per row): one transaction per interval at most.
      cv_.wait_for(lock, interval_, [&] { return stop_; });
      last = stop_;
      steps.swap(steps_);
      requests.swap(requests_);
    }
    if (steps.empty() && requests.empty()) {
      if (last) return;
      continue;
    }
    const auto why = commit(steps, requests);
    std::lock_guard<std::mutex> lock(mu_);
    if (why) {
      if (!totals_.failed) {
        failing_since = std::chrono::steady_clock::now();
        dropped_before = totals_.dropped;
        fmt::print(stderr, "serve: --db '{}': cannot store now ({}); serving goes on and storing "
                   "is retried every {} ms, keeping at most {} rows meanwhile\n", path_, *why,
                   interval_.count(), max_backlog_);
        std::fflush(stderr);
      }
      totals_.failed = true;
      // The rows go back in front of what arrived meanwhile; the backlog bound holds.
      steps.insert(steps.end(), steps_.begin(), steps_.end());
      requests.insert(requests.end(), requests_.begin(), requests_.end());
      steps_.swap(steps);
      requests_.swap(requests);
      while (steps_.size() + requests_.size() > max_backlog_) {
        if (!steps_.empty()) steps_.pop_back(); else requests_.pop_back();
        ++totals_.dropped;
      }
      steps.clear();
      requests.clear();
      if (last) {
        totals_.dropped += std::int64_t(steps_.size() + requests_.size());
        fmt::print(stderr, "serve: --db '{}': {} rows could not be stored before exit\n", path_,
                   steps_.size() + requests_.size());
        steps_.clear();
        requests_.clear();
        return;
      }
      continue;
    }
    if (totals_.failed) {
      const auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                      failing_since).count();
      fmt::print(stderr, "serve: --db '{}': storing again after {:.1f} s; {} rows were dropped "
                 "meanwhile\n", path_, secs, totals_.dropped - dropped_before);
      std::fflush(stderr);
      totals_.failed = false;
    }
    totals_.steps += std::int64_t(steps.size());
    totals_.requests += std::int64_t(requests.size());
    steps.clear();
    requests.clear();
    if (last && steps_.empty() && requests_.empty()) return;
  }
}

std::optional<std::string> ServeStore::commit(const std::vector<StepStats>& steps,
                                              const std::vector<ServedRequest>& requests) {
  Db& db = store_->db();
  try {
    transaction(db, [&] {
      auto st = db.prepare(
          "INSERT INTO serve_step (session_id, step, start_ns, dur_ns, forward_ns,"
          " prefill_tokens, decode_rows, seqs, running, waiting, kv_blocks_used, cached_tokens)"
          " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
      for (const StepStats& x : steps)
        st.bind(1, session_).bind(2, x.step).bind(3, x.start_ns).bind(4, x.total_ns)
            .bind(5, x.forward_ns).bind(6, x.prefill_tokens).bind(7, x.decode_rows)
            .bind(8, x.seqs).bind(9, x.running).bind(10, x.waiting).bind(11, x.blocks_used)
            .bind(12, x.cached_tokens)
            .run();
      auto rq = db.prepare(
          "INSERT INTO serve_request (session_id, request_id, prompt_tokens, completion_tokens,"
          " finish_reason, arrival_ns, first_scheduled_ns, first_token_ns, finished_ns,"
          " cached_tokens) VALUES (?,?,?,?,?,?,?,?,?,?)");
      for (const ServedRequest& r : requests) {
        rq.bind(1, session_).bind(2, std::int64_t(r.id)).bind(3, r.prompt_tokens)
            .bind(4, r.completion_tokens).bind(5, std::string(finish_reason_name(r.finish)));
        bind_time(rq, 6, r.times.arrival_ns);
        bind_time(rq, 7, r.times.first_scheduled_ns);
        bind_time(rq, 8, r.times.first_token_ns);
        bind_time(rq, 9, r.times.finished_ns);
        rq.bind(10, r.cached_tokens);
        rq.run();
      }
    });
    return std::nullopt;
  } catch (const std::exception& e) {
    if (const auto reason = write_failure_reason(e)) return reason;
    const std::string what = e.what();
    if (what.find("database is locked") != std::string::npos ||
        what.find("database is busy") != std::string::npos)
      return std::string("another process holds the database lock");
    return what.substr(0, 200);
  }
}

}  // namespace llmbench
