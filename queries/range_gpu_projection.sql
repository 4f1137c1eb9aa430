-- purpose: each NVTX / record_function range's GPU projection: from the first start to the last end of the kernels launched inside it (at any depth), beside the range's own host time
-- params: import_id = NULL (import.id; NULL: the latest import, or the latest traced case when the database holds no import); case_id = NULL (bench_case.id: read this llmbench trace instead of an import); range_name = NULL (only ranges of this name; NULL: all); top_n = 200 (ranges listed, in time order)
-- columns: range_id (slice.id of the range), name (range name), depth (nesting level), ts (range start, ns), range_us (host duration, us), ops (kernels, copies and sets launched inside), gpu_start_ts (first launched op's start, ns), gpu_end_ts (last launched op's end, ns), gpu_span_us (gpu_end_ts - gpu_start_ts, us), op_us (summed op time, us), gpu_lag_us (gpu_start_ts - ts: launch to first device work, us), gpu_tail_us (gpu_end_ts - range end: device work after the range closed, us)

-- Kernels are tied to a range through their launch (see kernel_by_nvtx_range.sql); a range
-- contains every op launched inside it or inside its nested ranges. Ranges that launched
-- nothing are not listed.
-- device_op (a view of the schema, docs/schema.md): the device work of every trace, with the
-- host slice that launched it; `latest` marks the default trace.
WITH ops AS (
  SELECT id, ts, dur, launch_id AS launch FROM device_op
  WHERE CASE WHEN :case_id IS NOT NULL THEN case_id = :case_id
             WHEN :import_id IS NOT NULL THEN import_id = :import_id ELSE latest END
),
-- Every ancestor of every launch, carrying the op's times along.
walk(op_ts, op_dur, node) AS (
  SELECT o.ts, o.dur, e.parent_id FROM ops AS o JOIN event AS e ON e.id = o.launch
  UNION ALL
  SELECT w.op_ts, w.op_dur, p.parent_id FROM walk AS w JOIN event AS p ON p.id = w.node
),
projection AS (
  SELECT r.id, r.name, r.depth, r.ts, r.dur, COUNT(*) AS ops, MIN(w.op_ts) AS gpu_start,
         MAX(w.op_ts + w.op_dur) AS gpu_end, SUM(w.op_dur) AS op_ns
  FROM walk AS w
  JOIN event AS r ON r.id = w.node
  WHERE COALESCE(r.category, '') IN ('nvtx', 'user_annotation', 'range')
    AND (:range_name IS NULL OR r.name = :range_name)
  GROUP BY r.id
)
SELECT id AS range_id, name, depth, ts, dur / 1e3 AS range_us, ops, gpu_start AS gpu_start_ts,
       gpu_end AS gpu_end_ts, (gpu_end - gpu_start) / 1e3 AS gpu_span_us, op_ns / 1e3 AS op_us,
       (gpu_start - ts) / 1e3 AS gpu_lag_us, (gpu_end - (ts + dur)) / 1e3 AS gpu_tail_us
FROM projection
ORDER BY ts, depth, id
LIMIT :top_n;
