-- purpose: GPU idle time per stream (per op track for llmbench traces): gaps between consecutive kernels, copies and sets, from the stream's first op to its last
-- params: import_id = NULL (import.id; NULL: the latest import, or the latest traced case when the database holds no import); case_id = NULL (bench_case.id: read this llmbench trace instead of an import)
-- columns: track_id (track.id), track (track name, e.g. GPU 0 stream 7), device_id (CUDA device; NULL when unknown), stream_id (CUDA stream; NULL when unknown), ops (kernels, copies, sets), span_us (first op start to last op end, us), busy_us (time some op runs, us), idle_us (span_us - busy_us), gaps (idle intervals), avg_gap_us (us), max_gap_us (us), idle_share (idle_us / span_us, 0..1)

-- A gap is an op's start minus the latest end of the ops before it on the same track, when
-- positive: overlapping ops (several engines on one stream's track) leave no gap.
-- device_op (a view of the schema, docs/schema.md): the device work of every trace, with the
-- host slice that launched it; `latest` marks the default trace.
WITH ops AS (
  SELECT id, ts, dur, track_id FROM device_op
  WHERE CASE WHEN :case_id IS NOT NULL THEN case_id = :case_id
             WHEN :import_id IS NOT NULL THEN import_id = :import_id ELSE latest END
),
gaps AS (
  SELECT track_id, ts, dur,
         ts - MAX(ts + dur) OVER (PARTITION BY track_id ORDER BY ts, id
                                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS gap
  FROM ops
),
per_track AS (
  SELECT track_id, COUNT(*) AS ops, MAX(ts + dur) - MIN(ts) AS span,
         SUM(CASE WHEN gap > 0 THEN gap ELSE 0 END) AS idle,
         COUNT(CASE WHEN gap > 0 THEN 1 END) AS gaps, MAX(CASE WHEN gap > 0 THEN gap END) AS max_gap
  FROM gaps
  GROUP BY track_id
)
SELECT p.track_id, t.name AS track, t.device_id, t.stream_id, p.ops, p.span / 1e3 AS span_us,
       (p.span - p.idle) / 1e3 AS busy_us, p.idle / 1e3 AS idle_us, p.gaps,
       p.idle / 1e3 / NULLIF(p.gaps, 0) AS avg_gap_us, p.max_gap / 1e3 AS max_gap_us,
       p.idle * 1.0 / NULLIF(p.span, 0) AS idle_share
FROM per_track AS p JOIN track AS t ON t.id = p.track_id
ORDER BY idle_us DESC, p.track_id;
