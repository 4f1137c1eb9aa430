// Chrome trace-event JSON export of an llmbench run (see export_chrome.h and docs/import.md).
#include "tools/trace_io/export_chrome.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <utility>
#include <nlohmann/json.hpp>

#include "kernels/common/error.h"
#include "tools/build_info/version.h"

namespace llmbench {

std::string ns_to_us_text(std::int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  const std::uint64_t a = ns < 0 ? std::uint64_t(-(ns + 1)) + 1 : std::uint64_t(ns);
  return fmt::format("{}{}.{:03}", sign, a / 1000, a % 1000);
}

namespace {

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct Exported {  // where an exported event went, for flows
  std::int64_t tid, ts, dur;
};

std::int64_t resolve_run(Db& db, const std::string& label, std::optional<std::int64_t> run_id) {
  auto traced = db.prepare(
      "SELECT MAX(b.run_id) FROM track AS t JOIN bench_case AS b ON b.id = t.case_id"
      " WHERE ?1 IS NULL OR b.run_id = ?1");
  if (run_id) traced.bind(1, *run_id); else traced.bind_null(1);
  traced.step();
  if (traced.column_type(0) != SQLITE_NULL) return traced.column_int(0);
  if (!run_id)
    throw BadInput("database '" + label +
                   "' has no traced run (record one with llmbench run --trace ops)");
  auto exists = db.prepare("SELECT COUNT(*) FROM run WHERE id = ?");
  exists.bind(1, *run_id);
  exists.step();
  if (exists.column_int(0) == 0)
    throw BadInput("--run " + std::to_string(*run_id) + ": database '" + label +
                   "' has no such run");
  throw BadInput("--run " + std::to_string(*run_id) + ": the run has no trace (it ran with "
                 "--trace off)");
}

class Writer {
 public:
  void event(const std::string& text) {
    out_ += first_ ? "\n" : ",\n";
    out_ += text;
    first_ = false;
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
  bool first_ = true;
};

// What the export writes into as it goes: the text, the one process id, where each event went
// (for flows), and the counts.
struct ExportState {
  Writer w;
  std::int64_t pid = 1;
  std::map<std::int64_t, Exported> exported;  // event id -> where it went
  ChromeExport& r;
};

// The run's first recorded process (pid and name), or pid 1 named after the run.
std::pair<std::int64_t, std::string> run_process(Db& db, std::int64_t run_id) {
  std::int64_t pid = 1;
  std::string name = "llmbench run " + std::to_string(run_id);
  auto p = db.prepare("SELECT pid, name FROM process WHERE run_id = ? ORDER BY upid LIMIT 1");
  p.bind(1, run_id);
  if (p.step()) {
    if (p.column_type(0) != SQLITE_NULL) pid = p.column_int(0);
    if (p.column_type(1) != SQLITE_NULL) name = p.column_text(1);
  }
  return {pid, name};
}

void name_thread(ExportState& x, std::int64_t tid, const std::string& name) {
  x.w.event(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})",
                        x.pid, tid, json_string(name)));
  x.w.event(fmt::format(
      R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
      x.pid, tid, tid));
}

// The event row's id and its non-null case_id, phase, step, layer, flops, bytes and enqueue
// time, as the body of a JSON args object.
std::string event_args(Stmt& events, std::int64_t id) {
  std::string args = "\"event_id\":" + std::to_string(id);
  const char* int_cols[] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                            "case_id", nullptr, "step",  "layer", "flops", "bytes",
                            "enqueue_ns"};
  for (int c = 6; c <= 12; ++c) {
    if (events.column_type(c) == SQLITE_NULL) continue;
    if (c == 7) args += ",\"phase\":" + json_string(events.column_text(c));
    else args += fmt::format(",\"{}\":{}", int_cols[c], events.column_int(c));
  }
  return args;
}

// The op's enclosing range issued it: a flow from that range to the op. Its start lies inside
// the range and outside the range's child ranges, so it binds to the range.
void launch_flow(ExportState& x, std::int64_t id, std::int64_t parent_id, std::int64_t host_tid,
                 std::int64_t tid, std::int64_t ts) {
  auto parent = x.exported.find(parent_id);
  if (parent == x.exported.end() || parent->second.tid != host_tid || parent->second.dur <= 0)
    return;
  const std::int64_t at = std::clamp(ts, parent->second.ts,
                                     parent->second.ts + parent->second.dur - 1);
  x.w.event(fmt::format(
      R"({{"ph":"s","cat":"llmbench","name":"launch","id":{},"pid":{},"tid":{},"ts":{}}})",
      id, x.pid, host_tid, ns_to_us_text(at)));
  x.w.event(fmt::format(
      R"({{"ph":"f","bp":"e","cat":"llmbench","name":"launch","id":{},"pid":{},"tid":{},"ts":{}}})",
      id, x.pid, tid, ns_to_us_text(ts)));
  ++x.r.flows;
}

// One track's events: host ranges on one thread, ops on the next (a 'gpu' track holds device
// ops only), each op with a flow from the range that issued it.
void export_track(ExportState& x, Stmt& events, std::int64_t track_id,
                  const std::string& track_name, const std::string& type,
                  const std::string& backend, std::int64_t& next_tid) {
  const std::int64_t host_tid = next_tid++, ops_tid = next_tid++;
  name_thread(x, host_tid, track_name + ": ranges");
  name_thread(x, ops_tid, track_name + ": " + backend + " ops");
  events.bind(1, track_id);
  while (events.step()) {
    const std::int64_t id = events.column_int(0), ts = events.column_int(1),
                       dur = events.column_int(2);
    const std::string category = events.column_text(3);
    const bool host = type != "gpu" && category == "range";
    const std::int64_t tid = host ? host_tid : ops_tid;
    x.w.event(fmt::format(
        R"({{"ph":"X","cat":{},"name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{{}}}}})",
        json_string(category), json_string(events.column_text(4)), x.pid, tid, ns_to_us_text(ts),
        ns_to_us_text(dur), event_args(events, id)));
    ++x.r.events;
    x.exported[id] = {tid, ts, dur};
    if (!host && events.column_type(5) != SQLITE_NULL)
      launch_flow(x, id, events.column_int(5), host_tid, tid, ts);
  }
  events.reset();
}

// Flow rows the database holds between the run's events (none for runs recorded today).
void export_stored_flows(Db& db, ExportState& x) {
  auto flows = db.prepare("SELECT id, slice_out, slice_in FROM flow");
  while (flows.step()) {
    auto out = x.exported.find(flows.column_int(1)), in = x.exported.find(flows.column_int(2));
    if (out == x.exported.end() || in == x.exported.end()) continue;
    const std::int64_t id = flows.column_int(0);
    x.w.event(fmt::format(
        R"({{"ph":"s","cat":"flow","name":"flow","id":{},"pid":{},"tid":{},"ts":{}}})", id, x.pid,
        out->second.tid, ns_to_us_text(out->second.ts)));
    x.w.event(fmt::format(
        R"({{"ph":"f","bp":"e","cat":"flow","name":"flow","id":{},"pid":{},"tid":{},"ts":{}}})",
        id, x.pid, in->second.tid, ns_to_us_text(in->second.ts)));
    ++x.r.flows;
  }
}

}  // namespace

ChromeExport export_chrome_trace(Db& db, const std::string& label,
                                 std::optional<std::int64_t> run_id) {
  ChromeExport r;
  r.run_id = resolve_run(db, label, run_id);
  ExportState x{Writer{}, 1, {}, r};
  const auto [pid, process_name] = run_process(db, r.run_id);
  x.pid = pid;
  x.w.out() = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":" +
              json_string(std::string("llmbench ") + kVersion) + ",\"database\":" +
              json_string(label) + ",\"run_id\":" + std::to_string(r.run_id) +
              "},\"traceEvents\":[";
  x.w.event(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}})",
                        x.pid, json_string(process_name)));

  auto tracks = db.prepare(
      "SELECT t.id, COALESCE(t.name, 'track ' || t.id), t.type, b.backend FROM track AS t"
      " JOIN bench_case AS b ON b.id = t.case_id WHERE b.run_id = ? ORDER BY t.id");
  tracks.bind(1, r.run_id);
  auto events = db.prepare(
      "SELECT id, ts, dur, category, name, parent_id, case_id, phase, step, layer, flops, bytes,"
      " enqueue_ts FROM event WHERE track_id = ? ORDER BY ts, depth, id");
  std::int64_t next_tid = 1;
  while (tracks.step()) {
    ++r.tracks;
    export_track(x, events, tracks.column_int(0), tracks.column_text(1), tracks.column_text(2),
                 tracks.column_text(3), next_tid);
  }
  export_stored_flows(db, x);
  x.w.out() += "\n]}\n";
  r.json = std::move(x.w.out());
  return r;
}

}  // namespace llmbench
