// See event_writer.h.
#include "tools/store/event_writer.h"

#include <map>
#include <string>
#include <utility>

#include "kernels/common/error.h"

namespace llmbench {

namespace {

void bind_opt(Stmt& s, int i, const std::optional<std::int64_t>& v) {
  if (v) s.bind(i, *v); else s.bind_null(i);
}

}  // namespace

EventWriter::EventWriter(Db& db)
    : db_(db),
      insert_(db.prepare(
          "INSERT INTO event (ts, dur, track_id, category, name, depth, parent_id, arg_set_id,"
          " case_id, rep, phase, step, layer, flops, bytes, enqueue_ts, correlation_id)"
          " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")) {}

std::int64_t EventWriter::write(const EventRow& r) {
  Stmt& s = insert_;
  s.bind(1, r.ts).bind(2, r.dur).bind(3, r.track_id);
  if (r.category.empty()) s.bind_null(4); else s.bind(4, r.category);
  s.bind(5, r.name).bind(6, r.depth);
  bind_opt(s, 7, r.parent_id);
  bind_opt(s, 8, r.arg_set_id);
  bind_opt(s, 9, r.case_id);
  bind_opt(s, 10, r.rep);
  if (r.phase) s.bind(11, *r.phase); else s.bind_null(11);
  bind_opt(s, 12, r.step);
  bind_opt(s, 13, r.layer);
  bind_opt(s, 14, r.flops);
  bind_opt(s, 15, r.bytes);
  bind_opt(s, 16, r.enqueue_ts);
  bind_opt(s, 17, r.correlation_id);
  s.run();
  return db_.last_insert_id();
}

std::vector<std::int64_t> write_op_records(EventWriter& events, std::int64_t track_id,
                                           const std::vector<OpRecord>& records,
                                           std::optional<std::int64_t> case_id) {
  std::vector<std::int64_t> ids(records.size());
  EventRow row;  // one row refilled: its strings keep their buffers from record to record
  row.track_id = track_id;
  if (case_id) {
    row.case_id = *case_id;
    row.rep = 0;
  }
  for (std::size_t i = 0; i < records.size(); ++i) {
    const OpRecord& r = records[i];
    row.ts = r.start_ns;
    row.dur = r.dur_ns;
    row.category = category_name(r.category);
    row.name = r.name;
    row.depth = r.depth;
    row.parent_id.reset();
    if (r.parent >= 0) row.parent_id = ids[std::size_t(r.parent)];
    row.phase = phase_name(r.phase);
    row.step = r.step;
    row.layer.reset();
    if (r.layer >= 0) row.layer = r.layer;
    row.flops.reset();
    row.bytes.reset();
    if (r.category != OpCategory::kRange) {
      row.flops = r.flops;
      row.bytes = r.bytes;
    }
    row.enqueue_ts = r.enqueue_ns;
    ids[i] = events.write(row);
  }
  return ids;
}

void write_device_work(Db& db, EventWriter& events, std::int64_t upid, std::int64_t case_id,
                       const std::vector<OpRecord>& records,
                       const std::vector<std::int64_t>& op_event_ids, const DeviceTrace& work) {
  LLMBENCH_CHECK(op_event_ids.size() == records.size(), "one event id per op record");
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> tracks;  // (device, stream)
  Stmt add_track = db.prepare(
      "INSERT INTO track (name, type, upid, case_id, device_id, stream_id)"
      " VALUES (?, 'gpu', ?, ?, ?, ?)");
  EventRow row;
  for (const DeviceWorkRecord& w : work.records) {
    LLMBENCH_CHECK(w.op >= 0 && std::size_t(w.op) < records.size() && w.name >= 0 &&
                       std::size_t(w.name) < work.names.size(),
                   "device work names an op and a name of its trace");
    const auto key = std::make_pair(w.device, w.stream);
    auto it = tracks.find(key);
    if (it == tracks.end()) {
      add_track.bind(1, "GPU " + std::to_string(w.device) + " stream " + std::to_string(w.stream))
          .bind(2, upid).bind(3, case_id).bind(4, std::int64_t(w.device))
          .bind(5, std::int64_t(w.stream));
      add_track.run();
      it = tracks.emplace(key, db.last_insert_id()).first;
    }
    row.ts = w.start_ns;
    row.dur = w.dur_ns;
    row.track_id = it->second;
    row.category = device_work_category(w.kind);
    row.name = work.names[std::size_t(w.name)];
    row.depth = records[std::size_t(w.op)].depth + 1;
    row.parent_id = op_event_ids[std::size_t(w.op)];
    row.bytes.reset();
    if (w.kind != DeviceWorkKind::kKernel) row.bytes = w.bytes;
    row.correlation_id = std::int64_t(w.correlation_id);
    events.write(row);
  }
}

}  // namespace llmbench
