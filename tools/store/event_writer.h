// The one writer of the `event` table (docs/schema.md): llmbench's own traces (store.cpp) and
// imported ones (trace_writer.cpp) fill the same EventRow and go through the same prepared
// INSERT, so a column means the same thing whatever wrote it. Not a transaction: the caller
// holds one around a whole trace.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/trace.h"
#include "tools/store/sqlite_db.h"

namespace llmbench {

// One interval. Empty optionals (and an empty category) are stored as NULL.
struct EventRow {
  std::int64_t ts = 0, dur = 0;             // ns
  std::int64_t track_id = 0;
  std::string category, name;
  int depth = 0;
  std::optional<std::int64_t> parent_id, arg_set_id;
  // llmbench's own traces.
  std::optional<std::int64_t> case_id, rep, step, layer, enqueue_ts;
  std::optional<std::string> phase;
  // Both: analytic work of llmbench ops, or what an importer recovered.
  std::optional<std::int64_t> flops, bytes, correlation_id;
};

class EventWriter {
 public:
  explicit EventWriter(Db& db);
  // Inserts the row; returns its event id.
  std::int64_t write(const EventRow& row);

 private:
  Db& db_;
  Stmt insert_;
};

// llmbench's own op records (engine/model/trace.h) on `track_id`, in begin order, so a parent's
// event id is known before its children's: a traced case (`case_id` set, repetition 0) or a
// served session's steps (`serve --trace`, no case). One writer serves many calls (a served
// session's commit writes every queued step through one prepared INSERT). Returns each
// record's event id.
std::vector<std::int64_t> write_op_records(EventWriter& events, std::int64_t track_id,
                                           const std::vector<OpRecord>& records,
                                           std::optional<std::int64_t> case_id = std::nullopt);

// The kernels, copies and sets of a traced case (the CUPTI op timer) as child events of their
// ops (`op_event_ids`: write_op_records' ids of the records the DeviceWorkRecords index), on
// one 'gpu' track of the case per device and stream, made here under process `upid`
// (docs/schema.md, "Kernels of llmbench's own traces"). The events carry no case, phase or
// step: their op has them.
void write_device_work(Db& db, EventWriter& events, std::int64_t upid, std::int64_t case_id,
                       const std::vector<OpRecord>& records,
                       const std::vector<std::int64_t>& op_event_ids, const DeviceTrace& work);

}  // namespace llmbench
