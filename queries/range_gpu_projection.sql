-- purpose: each NVTX / record_function range's GPU projection: from the first start to the last end of the kernels launched inside it (at any depth), beside the range's own host time
-- params: import_id = NULL (import.id; NULL: the latest import, or the latest traced case when the database holds no import); case_id = NULL (bench_case.id: read this llmbench trace instead of an import); range_name = NULL (only ranges of this name; NULL: all); top_n = 200 (ranges listed, in time order)
-- columns: range_id (slice.id of the range), name (range name), depth (nesting level), ts (range start, ns), range_us (host duration, us), ops (kernels, copies and sets launched inside), gpu_start_ts (first launched op's start, ns), gpu_end_ts (last launched op's end, ns), gpu_span_us (gpu_end_ts - gpu_start_ts, us), op_us (summed op time, us), gpu_lag_us (gpu_start_ts - ts: launch to first device work, us), gpu_tail_us (gpu_end_ts - range end: device work after the range closed, us)

-- Kernels are tied to a range through their launch (see kernel_by_nvtx_range.sql); a range
-- contains every op launched inside it or inside its nested ranges. Ranges that launched
-- nothing are not listed.
WITH scope AS (
  SELECT CASE WHEN :case_id IS NULL THEN COALESCE(:import_id, (SELECT MAX(id) FROM import)) END
           AS import_id,
         CASE WHEN :case_id IS NOT NULL THEN :case_id
              WHEN :import_id IS NULL AND NOT EXISTS (SELECT 1 FROM import)
                THEN (SELECT MAX(case_id) FROM track) END AS case_id
),
scope_tracks AS (
  SELECT t.id, t.case_id IS NOT NULL AS own FROM track AS t, scope
  WHERE t.import_id = scope.import_id OR t.case_id = scope.case_id
),
ops AS (
  SELECT s.id, s.ts, s.dur,
         CASE WHEN t.own THEN s.id
              ELSE (SELECT MIN(f.slice_out) FROM flow AS f WHERE f.slice_in = s.id) END AS launch
  FROM slice AS s JOIN scope_tracks AS t ON t.id = s.track_id
  WHERE (NOT t.own AND lower(COALESCE(s.category, ''))
                       IN ('kernel', 'gpu_memcpy', 'gpu_memset', 'memcpy', 'memset'))
     OR (t.own AND s.category IS NOT 'range')
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
