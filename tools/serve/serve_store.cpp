// Writing the serving tables as the server runs (see serve_store.h). Times are integer ns since
// the session's origin (the server's start, steady_clock), as every llmbench trace time is.
#include "tools/serve/serve_store.h"

#include <fmt/core.h>

#include <sqlite3.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>

#include "kernels/common/error.h"
#include "tools/store/event_writer.h"

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

// The writer thread's scheduling: kGaps (SCHED_IDLE) or kShare (SCHED_OTHER at nice 19), both
// applied by Linux to the calling thread. Where SCHED_IDLE is refused, nice 19 it is. Leaving
// SCHED_IDLE needs CAP_SYS_NICE or an RLIMIT_NICE above 0 (sched_setscheduler(2)): where the
// kernel refuses, the writer stays in the gaps and the backlog bound holds as it always did.
class Yield {
 public:
  enum Mode { kUnset, kGaps, kShare };
  Yield() { set(kGaps); }
  void set(Mode m) {
    if (m == mode_ || (m == kShare && share_refused_)) return;
    sched_param none{};
    if (m == kGaps && sched_setscheduler(0, SCHED_IDLE, &none) == 0) {
      mode_ = kGaps;
      return;
    }
    if (sched_setscheduler(0, SCHED_OTHER, &none) != 0) {
      share_refused_ = true;
      return;
    }
    setpriority(PRIO_PROCESS, id_t(::syscall(SYS_gettid)), 19);
    mode_ = kShare;
  }

 private:
  Mode mode_ = kUnset;
  bool share_refused_ = false;
};

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
      " prefix_caching, cpu_isa, kv_cache_dtype) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind(1, info.started_unix_ns).bind(2, info.command_line).bind(3, info.model)
      .bind(4, info.dtype).bind(5, info.backend).bind(6, info.device)
      .bind(7, info.scheduler.max_num_seqs).bind(8, info.scheduler.max_num_batched_tokens)
      .bind(9, info.scheduler.chunked_prefill ? 1 : 0).bind(10, info.scheduler.block_size)
      .bind(11, info.kv_blocks).bind(12, info.scheduler.prefix_caching ? 1 : 0);
  if (info.cpu_isa.empty())
    s.bind_null(13);
  else
    s.bind(13, info.cpu_isa);
  s.bind(14, std::string(kv_dtype_name(info.scheduler.kv_dtype)));
  s.run();
  session_ = db.last_insert_id();
  trace_ = info.trace;
  transaction(db, [&] {
    db.prepare("UPDATE serve_session SET trace = ? WHERE id = ?")
        .bind(1, std::string(trace_level_name(trace_))).bind(2, session_).run();
    if (trace_ == TraceLevel::kOff) return;
    // The trace's process, engine thread and track, as `run` makes one per run and case.
    const std::string name = "llmbench serve session " + std::to_string(session_);
    db.prepare("INSERT INTO process (pid, name) VALUES (?, ?)").bind(1, info.pid).bind(2, name)
        .run();
    const std::int64_t upid = db.last_insert_id();
    db.prepare("INSERT INTO thread (tid, name, upid) VALUES (NULL, 'engine', ?)")
        .bind(1, upid).run();
    const std::int64_t utid = db.last_insert_id();
    db.prepare("INSERT INTO track (name, type, utid, upid) VALUES (?, 'thread', ?, ?)")
        .bind(1, name + " engine steps (" + info.backend + ")").bind(2, utid).bind(3, upid)
        .run();
    track_ = db.last_insert_id();
    db.prepare("UPDATE serve_session SET track_id = ? WHERE id = ?").bind(1, track_)
        .bind(2, session_).run();
  });
}

void ServeStore::Pending::append(Pending&& later) {
  steps.insert(steps.end(), later.steps.begin(), later.steps.end());
  requests.insert(requests.end(), later.requests.begin(), later.requests.end());
  for (auto& t : later.traces) traces.push_back(std::move(t));
  trace_rows += later.trace_rows;
  later = Pending{};
}

std::size_t ServeStore::Pending::trim_to(std::size_t n) {
  std::size_t dropped = 0;
  while (rows() > n) {
    if (!traces.empty()) {
      trace_rows -= traces.back().size();
      dropped += traces.back().size();
      traces.pop_back();
    } else if (!steps.empty()) {
      steps.pop_back();
      ++dropped;
    } else {
      requests.pop_back();
      ++dropped;
    }
  }
  return dropped;
}

bool ServeStore::admit_rows(std::size_t n) {
  if (pending_.rows() + n <= max_backlog_) return true;
  totals_.dropped += std::int64_t(n);
  return false;
}

void ServeStore::on_step(const StepStats& step) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!admit_rows(1)) return;
  pending_.steps.push_back(step);
  if (trace_ == TraceLevel::kOff) pending_.steps.back().members = {};
}

void ServeStore::on_request(const ServedRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (admit_rows(1)) pending_.requests.push_back(request);
}

void ServeStore::on_trace(std::vector<OpRecord>&& records) {
  std::lock_guard<std::mutex> lock(mu_);
  if (trace_ == TraceLevel::kOff || records.empty() || !admit_rows(records.size())) return;
  pending_.trace_rows += records.size();
  pending_.traces.push_back(std::move(records));
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
  // The writer yields to the engine. At SCHED_IDLE it runs only on a core no other thread
  // wants and is preempted at once when an engine thread wakes; at nice 19 (the policy before)
  // it could keep a core for a scheduler slice in the middle of an op, and every thread of the
  // op waited for it: `serve --trace ops` writes ~190 events a step, and that cost 0-16% of the
  // engine's tokens/s (docs/serving.md, "Tracing a server"). Should the gaps not suffice (the
  // queue past half its bound) it steps up to nice 19, which always gets a share, until the
  // queue is drained.
  Yield yield;
  Pending batch;
  std::int64_t dropped_before = 0;  // totals_.dropped when the failing began
  auto failing_since = std::chrono::steady_clock::time_point{};
  for (;;) {
    bool last = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Waits the whole interval (not woken per row): one transaction per interval at most.
      cv_.wait_for(lock, interval_, [&] { return stop_; });
      last = stop_;
      std::swap(batch, pending_);
    }
    if (batch.empty()) {
      if (last) return;
      continue;
    }
    yield.set(batch.rows() > max_backlog_ / 2 ? Yield::kShare : Yield::kGaps);
    const auto why = commit(batch);
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
      batch.append(std::move(pending_));
      std::swap(batch, pending_);
      totals_.dropped += std::int64_t(pending_.trim_to(max_backlog_));
      batch = Pending{};
      if (last) {
        totals_.dropped += std::int64_t(pending_.rows());
        fmt::print(stderr, "serve: --db '{}': {} rows could not be stored before exit\n", path_,
                   pending_.rows());
        pending_ = Pending{};
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
    totals_.steps += std::int64_t(batch.steps.size());
    totals_.requests += std::int64_t(batch.requests.size());
    totals_.events += std::int64_t(batch.trace_rows);
    batch = Pending{};
    if (last && pending_.empty()) return;
  }
}

std::optional<std::string> ServeStore::commit(const Pending& p) {
  const std::vector<StepStats>& steps = p.steps;
  const std::vector<ServedRequest>& requests = p.requests;
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
      auto member = db.prepare(
          "INSERT INTO serve_step_request (session_id, step, request_id, role, tokens)"
          " VALUES (?,?,?,?,?)");
      for (const StepStats& x : steps)
        for (const StepMember& m : x.members)
          member.bind(1, session_).bind(2, x.step).bind(3, std::int64_t(m.id))
              .bind(4, std::string(m.prefill ? "prefill" : "decode")).bind(5, m.tokens).run();
      auto rq = db.prepare(
          "INSERT INTO serve_request (session_id, request_id, prompt_tokens, completion_tokens,"
          " finish_reason, arrival_ns, first_scheduled_ns, first_token_ns, finished_ns,"
          " cached_tokens, x_request_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
      for (const ServedRequest& r : requests) {
        rq.bind(1, session_).bind(2, std::int64_t(r.id)).bind(3, r.prompt_tokens)
            .bind(4, r.completion_tokens).bind(5, std::string(finish_reason_name(r.finish)));
        bind_time(rq, 6, r.times.arrival_ns);
        bind_time(rq, 7, r.times.first_scheduled_ns);
        bind_time(rq, 8, r.times.first_token_ns);
        bind_time(rq, 9, r.times.finished_ns);
        rq.bind(10, r.cached_tokens);
        if (r.x_request_id.empty()) rq.bind_null(11); else rq.bind(11, r.x_request_id);
        rq.run();
      }
      if (!p.traces.empty()) {
        EventWriter events(db);
        for (const auto& records : p.traces) write_op_records(events, track_, records);
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
