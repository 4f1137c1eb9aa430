// Writing an imported trace into the store (see trace_writer.h).
#include "tools/store/trace_writer.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tools/store/event_writer.h"
#include "tools/store/run_info.h"

namespace llmbench {

namespace {

template <class T>
void bind_opt(Stmt& s, int i, const std::optional<T>& v) {
  if (v) s.bind(i, std::int64_t(*v)); else s.bind_null(i);
}

void bind_text_or_null(Stmt& s, int i, const std::string& v) {
  if (v.empty()) s.bind_null(i); else s.bind(i, v);
}

nlohmann::json counts_json(const std::map<std::string, std::int64_t>& counts) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : counts) j[k] = v;
  return j;
}

// Which tracks the import uses (a slice or a counter on it): only those are stored.
std::vector<bool> used_tracks(const ImportedTrace& t) {
  std::vector<bool> used(t.tracks.size(), false);
  for (const auto& s : t.slices) used[s.track] = true;
  for (const auto& k : t.counters) used[k.track] = true;
  return used;
}

ImportCounts count_import(const ImportedTrace& t, const std::vector<bool>& used) {
  ImportCounts c;
  for (bool u : used) c.tracks += u;
  c.processes = std::int64_t(t.processes.size());
  c.threads = std::int64_t(t.threads.size());
  c.events = std::int64_t(t.slices.size());
  c.flows = std::int64_t(t.flows.size());
  c.counters = std::int64_t(t.counters.size());
  return c;
}

// The import row (source, counts, skipped events and notes); returns its id.
std::int64_t insert_import_row(Db& db, const ImportedTrace& t, const ImportSource& src,
                               const ImportCounts& c) {
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(src.path, ec);
  auto ins = db.prepare(
      "INSERT INTO import (format, source_path, source_bytes, source_version, imported_at,"
      " command_line, processes, threads, tracks, events, flows, counters, skipped, notes,"
      " metadata) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.bind(1, src.format).bind(2, ec ? src.path : absolute.string()).bind(3, src.bytes)
      .bind(5, utc_now_iso8601()).bind(6, src.command_line).bind(7, c.processes)
      .bind(8, c.threads).bind(9, c.tracks).bind(10, c.events).bind(11, c.flows)
      .bind(12, c.counters).bind(13, counts_json(t.skipped).dump())
      .bind(14, counts_json(t.notes).dump()).bind(15, t.metadata.dump());
  bind_text_or_null(ins, 4, t.source_version);
  ins.run();
  return db.last_insert_id();
}

// The processes, threads and used tracks; returns each trace track's row id (0 when unused).
std::vector<std::int64_t> insert_tracks(Db& db, const ImportedTrace& t,
                                        const std::vector<bool>& used, std::int64_t import_id) {
  std::vector<std::int64_t> upid(t.processes.size()), utid(t.threads.size()),
      track_id(t.tracks.size(), 0);
  auto proc = db.prepare("INSERT INTO process (pid, name, import_id) VALUES (?, ?, ?)");
  for (std::size_t i = 0; i < t.processes.size(); ++i) {
    bind_opt(proc, 1, t.processes[i].pid);
    bind_text_or_null(proc, 2, t.processes[i].name);
    proc.bind(3, import_id).run();
    upid[i] = db.last_insert_id();
  }
  auto thr = db.prepare("INSERT INTO thread (tid, name, upid) VALUES (?, ?, ?)");
  for (std::size_t i = 0; i < t.threads.size(); ++i) {
    bind_opt(thr, 1, t.threads[i].tid);
    bind_text_or_null(thr, 2, t.threads[i].name);
    thr.bind(3, upid[t.threads[i].process]).run();
    utid[i] = db.last_insert_id();
  }
  auto trk = db.prepare(
      "INSERT INTO track (name, type, utid, upid, import_id, device_id, stream_id)"
      " VALUES (?,?,?,?,?,?,?)");
  for (std::size_t i = 0; i < t.tracks.size(); ++i) {
    if (!used[i]) continue;
    const TraceTrack& k = t.tracks[i];
    bind_text_or_null(trk, 1, k.name);
    trk.bind(2, k.type);
    if (k.thread) trk.bind(3, utid[*k.thread]); else trk.bind_null(3);
    const auto process = k.thread ? std::optional(t.threads[*k.thread].process) : k.process;
    if (process) trk.bind(4, upid[*process]); else trk.bind_null(4);
    trk.bind(5, import_id);
    bind_opt(trk, 6, k.device_id);
    bind_opt(trk, 7, k.stream_id);
    trk.run();
    track_id[i] = db.last_insert_id();
  }
  return track_id;
}

// One arg row of arg set `arg_set`, its value in the column of its type.
void insert_arg(Stmt& arg, const ImportedTrace& t, const TraceArg& x, std::int64_t arg_set) {
  arg.bind(1, arg_set).bind(2, t.strings[x.flat_key]).bind(3, t.strings[x.key]);
  if (const auto* v = std::get_if<std::int64_t>(&x.value))
    arg.bind(4, *v).bind_null(5).bind_null(6).bind(7, std::string("int"));
  else if (const auto* d = std::get_if<double>(&x.value))
    arg.bind_null(4).bind_null(5).bind(6, *d).bind(7, std::string("real"));
  else
    arg.bind_null(4).bind(5, std::get<std::string>(x.value)).bind_null(6)
        .bind(7, std::string("string"));
  arg.run();
}

// The slices in the index's write order (a parent before its children) with their args;
// returns each trace slice's event id.
std::vector<std::int64_t> insert_slices(Db& db, const ImportedTrace& t, const TrackIndex& index,
                                        const std::vector<std::int64_t>& track_id) {
  std::vector<std::int64_t> event_id(t.slices.size(), 0);
  std::int64_t next_arg_set = 1;
  {
    auto q = db.prepare("SELECT COALESCE(MAX(arg_set_id), 0) + 1 FROM arg");
    q.step();
    next_arg_set = q.column_int(0);
  }
  EventWriter events(db);
  auto arg = db.prepare(
      "INSERT INTO arg (arg_set_id, flat_key, key, int_value, string_value, real_value,"
      " value_type) VALUES (?,?,?,?,?,?,?)");
  for (std::size_t i : index.write_order()) {
    const TraceSlice& s = t.slices[i];
    EventRow row;
    row.ts = s.ts;
    row.dur = s.dur;
    row.track_id = track_id[s.track];
    row.category = t.strings[s.category];
    row.name = t.strings[s.name];
    row.depth = s.depth;
    if (s.parent != kNoParent) row.parent_id = event_id[std::size_t(s.parent)];
    const std::int64_t arg_set = s.arg_count ? next_arg_set++ : 0;
    if (arg_set) row.arg_set_id = arg_set;
    row.bytes = s.bytes;
    row.flops = s.flops;
    row.correlation_id = s.correlation_id;
    event_id[i] = events.write(row);
    for (std::uint32_t a = s.arg_begin; a < s.arg_begin + s.arg_count; ++a)
      insert_arg(arg, t, t.args[a], arg_set);
  }
  return event_id;
}

}  // namespace

std::string describe_counts(const std::map<std::string, std::int64_t>& counts) {
  std::string out;
  for (const auto& [reason, n] : counts)
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " '" + reason + "'";
  return out;
}

ImportCounts write_import(Db& db, const ImportedTrace& t, const TrackIndex& index,
                          const ImportSource& src) {
  const std::vector<bool> used = used_tracks(t);
  ImportCounts c = count_import(t, used);
  // A large import touches every index page many times: a 256 MiB page cache for this
  // connection roughly halves the write time of a million events.
  db.exec("PRAGMA cache_size = -262144");
  transaction(db, [&] {
    c.import_id = insert_import_row(db, t, src, c);
    const std::vector<std::int64_t> track_id = insert_tracks(db, t, used, c.import_id);
    const std::vector<std::int64_t> event_id = insert_slices(db, t, index, track_id);
    auto flow = db.prepare("INSERT INTO flow (slice_out, slice_in) VALUES (?, ?)");
    for (const TraceFlow& f : t.flows) flow.bind(1, event_id[f.out]).bind(2, event_id[f.in]).run();
    auto ctr = db.prepare("INSERT INTO counter (ts, track_id, value) VALUES (?, ?, ?)");
    for (const TraceCounter& k : t.counters)
      ctr.bind(1, k.ts).bind(2, track_id[k.track]).bind(3, k.value).run();
  });
  return c;
}

}  // namespace llmbench
