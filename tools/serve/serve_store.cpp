// Writing the serving tables (see serve_store.h). Times are integer ns since the session's
// origin (the server's start, steady_clock), as every llmbench trace time is.
#include "tools/serve/serve_store.h"

#include <sqlite3.h>

#include <memory>

#include "kernels/common/error.h"

namespace llmbench {

const char* const kServeSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS serve_session (
  id                     INTEGER PRIMARY KEY,
  started_unix_ns        INTEGER NOT NULL,  -- wall clock at the server's origin
  command_line           TEXT,
  model                  TEXT,
  dtype                  TEXT,
  backend                TEXT,
  device                 TEXT,
  max_num_seqs           INTEGER,
  max_num_batched_tokens INTEGER,
  chunked_prefill        INTEGER,           -- 1 on, 0 off
  kv_block_size          INTEGER,
  kv_blocks              INTEGER
);
CREATE TABLE IF NOT EXISTS serve_step (
  session_id      INTEGER NOT NULL REFERENCES serve_session(id),
  step            INTEGER NOT NULL,         -- 1, 2, ... within the session
  start_ns        INTEGER NOT NULL,         -- since the server's origin
  dur_ns          INTEGER NOT NULL,         -- the whole step: scheduling + forward + bookkeeping
  forward_ns      INTEGER NOT NULL,         -- the forward pass alone
  prefill_tokens  INTEGER NOT NULL,         -- prompt rows (whole prompts and chunks)
  decode_rows     INTEGER NOT NULL,
  seqs            INTEGER NOT NULL,         -- sequences with rows in the step
  running         INTEGER NOT NULL,         -- after the step
  waiting         INTEGER NOT NULL,         -- after the step
  kv_blocks_used  INTEGER NOT NULL,         -- after the step
  PRIMARY KEY (session_id, step)
);
CREATE TABLE IF NOT EXISTS serve_request (
  session_id          INTEGER NOT NULL REFERENCES serve_session(id),
  request_id          INTEGER NOT NULL,
  prompt_tokens       INTEGER NOT NULL,
  completion_tokens   INTEGER NOT NULL,
  finish_reason       TEXT NOT NULL,        -- length | stop | abort
  arrival_ns          INTEGER,              -- queued by the engine (NULL: never reached it)
  first_scheduled_ns  INTEGER,              -- start of the first step with its rows
  first_token_ns      INTEGER,              -- end of the step that produced its first token
  finished_ns         INTEGER,
  PRIMARY KEY (session_id, request_id)
);
)sql";

namespace {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtCloser>;

void check(sqlite3* db, int rc, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
    throw Error(std::string("serve store: ") + what + ": " + sqlite3_errmsg(db));
}

Stmt prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* s = nullptr;
  check(db, sqlite3_prepare_v2(db, sql, -1, &s, nullptr), sql);
  return Stmt(s);
}

void bind_time(sqlite3_stmt* s, int i, std::int64_t ns) {
  if (ns < 0)
    sqlite3_bind_null(s, i);
  else
    sqlite3_bind_int64(s, i, ns);
}

void step_done(sqlite3* db, sqlite3_stmt* s, const char* what) {
  check(db, sqlite3_step(s), what);
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
}

}  // namespace

std::int64_t write_serve_session(const std::string& path, const ServeSessionInfo& info,
                                 const std::vector<StepStats>& steps,
                                 const std::vector<ServedRequest>& requests) {
  sqlite3* raw = nullptr;
  if (sqlite3_open(path.c_str(), &raw) != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : "out of memory";
    sqlite3_close(raw);
    throw Error("serve store: cannot open " + path + ": " + msg);
  }
  std::unique_ptr<sqlite3, DbCloser> db(raw);
  sqlite3_busy_timeout(raw, 5000);
  check(raw, sqlite3_exec(raw, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), "begin");
  try {
    check(raw, sqlite3_exec(raw, kServeSchemaSql, nullptr, nullptr, nullptr), "schema");
    Stmt s = prepare(raw,
                     "INSERT INTO serve_session (started_unix_ns, command_line, model, dtype, "
                     "backend, device, max_num_seqs, max_num_batched_tokens, chunked_prefill, "
                     "kv_block_size, kv_blocks) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    sqlite3_bind_int64(s.get(), 1, info.started_unix_ns);
    const std::string* texts[] = {&info.command_line, &info.model, &info.dtype, &info.backend,
                                  &info.device};
    for (int i = 0; i < 5; ++i)
      sqlite3_bind_text(s.get(), 2 + i, texts[i]->c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(s.get(), 7, info.scheduler.max_num_seqs);
    sqlite3_bind_int(s.get(), 8, info.scheduler.max_num_batched_tokens);
    sqlite3_bind_int(s.get(), 9, info.scheduler.chunked_prefill ? 1 : 0);
    sqlite3_bind_int(s.get(), 10, info.scheduler.block_size);
    sqlite3_bind_int(s.get(), 11, info.kv_blocks);
    step_done(raw, s.get(), "insert serve_session");
    const std::int64_t session = sqlite3_last_insert_rowid(raw);

    Stmt st = prepare(raw,
                      "INSERT INTO serve_step VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    for (const StepStats& x : steps) {
      const std::int64_t v[] = {session,          x.step,        x.start_ns, x.total_ns,
                                x.forward_ns,     x.prefill_tokens, x.decode_rows, x.seqs,
                                x.running,        x.waiting,     x.blocks_used};
      for (int i = 0; i < 11; ++i) sqlite3_bind_int64(st.get(), i + 1, v[i]);
      step_done(raw, st.get(), "insert serve_step");
    }
    Stmt rq = prepare(raw, "INSERT INTO serve_request VALUES (?,?,?,?,?,?,?,?,?)");
    for (const ServedRequest& r : requests) {
      sqlite3_bind_int64(rq.get(), 1, session);
      sqlite3_bind_int64(rq.get(), 2, std::int64_t(r.id));
      sqlite3_bind_int(rq.get(), 3, r.prompt_tokens);
      sqlite3_bind_int(rq.get(), 4, r.completion_tokens);
      const std::string reason(finish_reason_name(r.finish));
      sqlite3_bind_text(rq.get(), 5, reason.c_str(), -1, SQLITE_TRANSIENT);
      bind_time(rq.get(), 6, r.times.arrival_ns);
      bind_time(rq.get(), 7, r.times.first_scheduled_ns);
      bind_time(rq.get(), 8, r.times.first_token_ns);
      bind_time(rq.get(), 9, r.times.finished_ns);
      step_done(raw, rq.get(), "insert serve_request");
    }
    check(raw, sqlite3_exec(raw, "COMMIT", nullptr, nullptr, nullptr), "commit");
    return session;
  } catch (...) {
    sqlite3_exec(raw, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

}  // namespace llmbench
