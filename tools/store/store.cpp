// The result store's writer of runs and cases (see store.h; the schema is schema.h).
#include "tools/store/store.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include "kernels/common/error.h"
#include "tools/store/case_key.h"
#include "tools/store/event_writer.h"
#include "tools/store/result_fields.h"
#include "tools/store/variants_json.h"

namespace llmbench {

namespace {
// Per-sequence rows of a flat [batch, len] array; a ragged case's rows have their own lengths.
std::string rows_json(const std::vector<std::int32_t>& flat, int batch,
                      const std::vector<int>& lens) {
  nlohmann::json j = nlohmann::json::array();
  if (!lens.empty()) {
    std::size_t at = 0;
    for (int n : lens) {
      j.push_back(std::vector<std::int32_t>(flat.begin() + std::ptrdiff_t(at),
                                            flat.begin() + std::ptrdiff_t(at + std::size_t(n))));
      at += std::size_t(n);
    }
    return j.dump();
  }
  const std::size_t per = batch > 0 ? flat.size() / std::size_t(batch) : 0;
  for (int b = 0; b < batch; ++b)
    j.push_back(std::vector<std::int32_t>(flat.begin() + b * per, flat.begin() + (b + 1) * per));
  return j.dump();
}

std::optional<double> gemm_peak(const Peaks& p, DType d) {
  const auto it = p.gemm_tflops.find(d);
  return it == p.gemm_tflops.end() ? std::nullopt : std::optional<double>(it->second);
}

}  // namespace

ResultStore::ResultStore(const std::string& path) : setup_lock_(path), db_(path, /*create=*/true) {
  // Of two llmbench processes opening a new database together, one creates the schema and sets
  // WAL while the other waits on the set-up lock (setup_lock.h), then finds it done. Schema
  // creation and migration are also one exclusive transaction (BEGIN IMMEDIATE waits on the
  // busy timeout for a concurrent writer), and the version is read again inside it.
  migrate_schema(db_);
  setup_lock_.release();
}

std::int64_t ResultStore::begin_run(const RunInfo& r) {
  std::int64_t id = 0;
  transaction(db_, [&] {
    auto ins = db_.prepare(
        std::string("INSERT INTO run (") + kRunEnvColumns +
        ", gpu, driver, threads, peak_bandwidth_gbps, peak_tflops, peak_source, status, plan_key,"
        " n_cases, profile, shard, sweep_key, peak_fp32_tflops, peak_bf16_tflops, peak_fp16_tflops,"
        " peak_int8_tflops, peak_int4_tflops, cpu_isa)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,'running',?,?,?,?,?,?,?,?,?,?,?)");
    bind_run_env(ins, 1, r);
    ins.bind(8, r.gpu).bind(9, r.driver).bind(10, r.threads)
        .bind(11, r.peaks.bandwidth_gbps).bind(12, r.peaks.tflops).bind(13, r.peaks.source)
        .bind(14, r.plan_key).bind(15, r.n_cases).bind(16, r.profile).bind(17, r.shard)
        .bind(18, r.sweep_key)
        .bind(19, gemm_peak(r.peaks, DType::kFp32)).bind(20, gemm_peak(r.peaks, DType::kBf16))
        .bind(21, gemm_peak(r.peaks, DType::kFp16)).bind(22, gemm_peak(r.peaks, DType::kInt8))
        .bind(23, gemm_peak(r.peaks, DType::kInt4)).bind(24, r.cpu_isa)
        .run();
    id = db_.last_insert_id();
    // The trace's process and (host) thread: Perfetto's model, one process per run.
    db_.prepare("INSERT INTO process (pid, name, run_id) VALUES (?, ?, ?)")
        .bind(1, std::int64_t(getpid())).bind(2, "llmbench run " + std::to_string(id)).bind(3, id)
        .run();
    const std::int64_t upid = db_.last_insert_id();
    db_.prepare("INSERT INTO thread (tid, name, upid) VALUES (?, 'llmbench', ?)")
        .bind(1, std::int64_t(gettid())).bind(2, upid).run();
  });
  return id;
}

void ResultStore::finish_run(std::int64_t run_id, const std::string& status) {
  db_.prepare("UPDATE run SET status = ?, finished_at = ? WHERE id = ?")
      .bind(1, status).bind(2, utc_now_iso8601()).bind(3, run_id).run();
}

void ResultStore::set_run_status(std::int64_t run_id, const std::string& status) {
  db_.prepare("UPDATE run SET status = ?, finished_at = NULL WHERE id = ?")
      .bind(1, status).bind(2, run_id).run();
}

Peaks ResultStore::run_peaks(std::int64_t run_id) { return run_info(run_id).peaks; }

RunInfo ResultStore::run_info(std::int64_t run_id) {
  auto r = read_run_info(db_, run_id);
  if (!r) throw Error("run " + std::to_string(run_id) + " is not in the database");
  return *r;
}

std::optional<std::int64_t> ResultStore::find_run(const std::string& plan_key) {
  auto q = db_.prepare("SELECT id FROM run WHERE plan_key = ? ORDER BY id DESC LIMIT 1");
  q.bind(1, plan_key);
  if (!q.step()) return std::nullopt;
  return q.column_int(0);
}

std::set<std::string> ResultStore::stored_case_keys(std::int64_t run_id) {
  std::set<std::string> keys;
  auto q = db_.prepare("SELECT case_key FROM bench_case WHERE run_id = ? AND case_key IS NOT NULL");
  q.bind(1, run_id);
  while (q.step()) keys.insert(q.column_text(0));
  return keys;
}

std::int64_t ResultStore::add_case(std::int64_t run_id, const CaseResult& c, int case_index) {
  const CaseSpec& s = c.spec;
  const bool ok = c.status == "ok";
  std::int64_t case_id = 0;
  transaction(db_, [&] {
    // Columns: the run, the field list's database fields (values by name, never by position),
    // then what only the store knows.
    std::string cols = "run_id", marks = "?";
    std::vector<FieldValue> values;
    for (const ResultField& f : result_fields()) {
      if (!(f.outputs & kDb)) continue;
      cols += ", " + std::string(f.name);
      marks += ",?";
      values.push_back(field_value(f, c, FieldSink::kDb));
    }
    cols += ", prompt_ids, generated_ids, finished_at, case_index, case_key";
    marks += ",?,?,?,?,?";
    auto ins = db_.prepare("INSERT INTO bench_case (" + cols + ") VALUES (" + marks + ")");
    int i = 1;
    ins.bind(i++, run_id);
    for (const FieldValue& v : values) {
      if (const auto* x = std::get_if<std::int64_t>(&v)) ins.bind(i, *x);
      else if (const auto* d = std::get_if<double>(&v)) ins.bind(i, *d);
      else if (const auto* t = std::get_if<std::string>(&v)) ins.bind(i, *t);
      else ins.bind_null(i);
      ++i;
    }
    if (ok) {
      ins.bind(i, rows_json(c.prompt_ids, s.batch, c.prompt_lens));
      ins.bind(i + 1, nlohmann::json(c.generated).dump());
    } else {
      ins.bind_null(i).bind_null(i + 1);
    }
    ins.bind(i + 2, utc_now_iso8601());
    if (case_index >= 0) ins.bind(i + 3, case_index); else ins.bind_null(i + 3);
    ins.bind(i + 4, case_key(s));
    ins.run();
    case_id = db_.last_insert_id();
    if (!c.trace.empty()) write_trace(run_id, case_id, c);

    auto sample = db_.prepare(
        "INSERT INTO bench_sample (case_id, rep, ttft_ns, e2e_ns) VALUES (?,?,?,?)");
    auto step = db_.prepare(
        "INSERT INTO bench_step (sample_id, step, kv_len, decode_ns, bytes) VALUES (?,?,?,?,?)");
    // Positions each sequence attends in decode step k (1-based): prompt_len + k; in a ragged
    // case the mean, rounded, over the sequences the step advanced.
    auto kv_len = [&](int k) -> std::int64_t {
      if (c.prompt_lens.empty()) return s.prompt_len + k;
      std::int64_t sum = 0, rows = 0;
      for (std::size_t q = 0; q < c.prompt_lens.size() && q < c.generated.size(); ++q)
        if (int(c.generated[q].size()) > k) {
          sum += c.prompt_lens[q] + k;
          ++rows;
        }
      return rows > 0 ? (sum + rows / 2) / rows : 0;
    };
    for (std::size_t i = 0; i < c.samples.size(); ++i) {
      const RepSample& r = c.samples[i];
      sample.bind(1, case_id).bind(2, int(i)).bind(3, r.ttft_ns).bind(4, r.e2e_ns()).run();
      const std::int64_t sample_id = db_.last_insert_id();
      for (std::size_t k = 0; k < r.decode_ns.size(); ++k)
        step.bind(1, sample_id).bind(2, int(k + 1)).bind(3, kv_len(int(k) + 1))
            .bind(4, r.decode_ns[k]).bind(5, c.cost.decode_bytes[k]).run();
    }
  });
  return case_id;
}

void ResultStore::write_trace(std::int64_t run_id, std::int64_t case_id, const CaseResult& c) {
  auto who = db_.prepare(
      "SELECT t.utid, p.upid FROM thread t JOIN process p USING (upid) WHERE p.run_id = ?");
  who.bind(1, run_id);
  if (!who.step()) throw Error("trace: run " + std::to_string(run_id) + " has no process row");
  const std::int64_t utid = who.column_int(0), upid = who.column_int(1);
  db_.prepare("INSERT INTO track (name, type, utid, upid, case_id) VALUES (?, 'thread', ?, ?, ?)")
      .bind(1, c.spec.label() + " (" + c.spec.backend + ")").bind(2, utid).bind(3, upid)
      .bind(4, case_id).run();
  const std::int64_t track_id = db_.last_insert_id();

  EventWriter events(db_);
  const std::vector<std::int64_t> ids = write_op_records(events, track_id, c.trace, case_id);
  if (!c.trace_device.records.empty())
    write_device_work(db_, events, upid, case_id, c.trace, ids, c.trace_device);
}

}  // namespace llmbench
