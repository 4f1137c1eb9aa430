// The serving benchmark tables' writer (see load_store.h).
#include "tools/load/load_store.h"

#include <cmath>

#include "tools/store/run_info.h"

namespace llmbench {

LoadStore::LoadStore(const std::string& path) : store_(path) {}

std::int64_t LoadStore::begin_run(const LoadPlan& plan, const LoadRunInfo& info) {
  RunInfo env = current_run_info();
  env.command_line = info.command_line;
  const LoadOptions& o = plan.opt;
  Db& db = store_.db();
  auto q = db.prepare(
      std::string("INSERT INTO load_run (") + kRunEnvColumns +
      ", status, label, url, endpoint, model, server_cmd, prompt_kind, mode, seed,"
      " num_requests, duration_s, input_len_stddev, output_len_stddev, ignore_eos,"
      " warmup_requests, goodput, connect_timeout_s, first_byte_timeout_s, idle_timeout_s)"
      " VALUES (?,?,?,?,?,?,?,'running',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  bind_run_env(q, 1, env);
  q.bind(8, info.label).bind(9, info.url).bind(10, info.endpoint).bind(11, info.model)
      .bind(12, info.server_cmd).bind(13, info.prompt_kind)
      .bind(14, std::string(mode_name(plan.mode)))
      .bind(15, std::int64_t(o.seed)).bind(16, plan.num_requests);
  if (o.duration_s > 0) q.bind(17, o.duration_s); else q.bind_null(17);
  q.bind(18, o.input_len_stddev).bind(19, o.output_len_stddev).bind(20, o.ignore_eos ? 1 : 0)
      .bind(21, o.warmup_requests).bind(22, goodput_text(plan.goodput))
      .bind(23, o.connect_timeout_s).bind(24, o.first_byte_timeout_s).bind(25, o.idle_timeout_s);
  q.run();
  const std::int64_t id = db.last_insert_id();
  auto w = db.prepare(
      "UPDATE load_run SET dataset_name = ?, dataset_path = ?, tokenizer = ?, lengths = ?,"
      " use_server_responses = ?, think_time_ms = ?, time_scale = ?, hash_block_size = ?"
      " WHERE id = ?");
  w.bind(1, o.dataset_name);
  auto text_or_null = [&](int i, const std::string& v) {
    if (v.empty()) w.bind_null(i); else w.bind(i, v);
  };
  text_or_null(2, o.dataset_path);
  text_or_null(3, o.tokenizer);
  text_or_null(4, info.lengths);
  w.bind(5, o.use_server_responses ? 1 : 0).bind(6, o.think_time_ms).bind(7, o.time_scale);
  if (o.dataset_name == "mooncake") w.bind(8, o.hash_block_size); else w.bind_null(8);
  w.bind(9, id).run();
  return id;
}

std::int64_t LoadStore::add_level(std::int64_t run_id, const LevelSpec& level, int max_in_flight,
                                  const std::vector<RequestRecord>& requests,
                                  std::int64_t duration_ns, std::int64_t started_unix_ns) {
  Db& db = store_.db();
  std::int64_t level_id = 0;
  int ok = 0;
  for (const RequestRecord& r : requests) ok += r.ok ? 1 : 0;
  transaction(db, [&] {
    auto lv = db.prepare(
        "INSERT INTO load_level (load_run_id, level_index, level, concurrency, request_rate,"
        " burstiness, max_in_flight, input_len, output_len, started_unix_ns, duration_ns,"
        " requests, ok, failed, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    lv.bind(1, run_id).bind(2, level.index).bind(3, level.label());
    if (level.mode == LoadMode::kConcurrency) {
      lv.bind(4, level.concurrency).bind_null(5).bind_null(6).bind_null(7);
    } else if (level.mode == LoadMode::kTrace) {
      lv.bind_null(4).bind_null(5).bind_null(6);
      if (max_in_flight > 0) lv.bind(7, max_in_flight); else lv.bind_null(7);
    } else {
      lv.bind_null(4).bind(5, level.request_rate);
      if (std::isinf(level.request_rate)) lv.bind_null(6); else lv.bind(6, level.burstiness);
      if (max_in_flight > 0) lv.bind(7, max_in_flight); else lv.bind_null(7);
    }
    lv.bind(8, level.input_len).bind(9, level.output_len).bind(10, started_unix_ns)
        .bind(11, duration_ns).bind(12, int(requests.size())).bind(13, ok)
        .bind(14, int(requests.size()) - ok).bind(15, utc_now_iso8601());
    lv.run();
    level_id = db.last_insert_id();

    auto rq = db.prepare(
        "INSERT INTO load_request (level_id, request_index, status, error, http_status,"
        " input_len, max_tokens, prompt_tokens, completion_tokens, output_tokens, chunks,"
        " finish_reason, scheduled_ns, send_ns, first_byte_ns, first_token_ns, end_ns, ttft_ns,"
        " tpot_ns, e2el_ns, session_index, turn_index, x_request_id)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    auto ch = db.prepare(
        "INSERT INTO load_chunk (request_id, idx, arrival_ns, itl_ns, tokens) VALUES (?,?,?,?,?)");
    auto time_or_null = [](Stmt& s, int i, std::int64_t ns) {
      if (ns < 0) s.bind_null(i); else s.bind(i, ns);
    };
    for (const RequestRecord& r : requests) {
      rq.bind(1, level_id).bind(2, r.index).bind(3, std::string(r.ok ? "ok" : "error"));
      if (r.error.empty()) rq.bind_null(4); else rq.bind(4, r.error);
      if (r.http_status > 0) rq.bind(5, r.http_status); else rq.bind_null(5);
      rq.bind(6, r.input_len).bind(7, r.max_tokens);
      if (r.prompt_tokens) rq.bind(8, *r.prompt_tokens); else rq.bind_null(8);
      if (r.completion_tokens) rq.bind(9, *r.completion_tokens); else rq.bind_null(9);
      rq.bind(10, r.output_tokens).bind(11, int(r.chunks.size()));
      if (r.finish_reason.empty()) rq.bind_null(12); else rq.bind(12, r.finish_reason);
      time_or_null(rq, 13, r.scheduled_ns);
      rq.bind(14, r.send_ns);
      time_or_null(rq, 15, r.first_byte_ns);
      time_or_null(rq, 16, r.first_token_ns);
      rq.bind(17, r.end_ns);
      if (auto t = r.ttft_ns()) rq.bind(18, *t); else rq.bind_null(18);
      if (auto t = r.tpot_ns()) rq.bind(19, *t); else rq.bind_null(19);
      if (auto t = r.e2el_ns()) rq.bind(20, *t); else rq.bind_null(20);
      rq.bind(21, r.session_index).bind(22, r.turn_index);
      if (r.x_request_id.empty()) rq.bind_null(23); else rq.bind(23, r.x_request_id);
      rq.run();
      const std::int64_t request_id = db.last_insert_id();
      for (std::size_t k = 0; k < r.chunks.size(); ++k) {
        ch.bind(1, request_id).bind(2, int(k)).bind(3, r.chunks[k].arrival_ns);
        if (k == 0) ch.bind_null(4); else ch.bind(4, r.chunks[k].arrival_ns - r.chunks[k - 1].arrival_ns);
        ch.bind(5, r.chunks[k].tokens);
        ch.run();
      }
    }
  });
  return level_id;
}

void LoadStore::finish_run(std::int64_t run_id, const std::string& status) {
  store_.db()
      .prepare("UPDATE load_run SET status = ?, finished_at = ? WHERE id = ?")
      .bind(1, status).bind(2, utc_now_iso8601()).bind(3, run_id).run();
}

}  // namespace llmbench
