-- purpose: slices inside the Nth occurrence of a named range (e.g. one decode step) of a traced case, by total time
-- params: case_id = NULL (bench_case.id; NULL: the latest traced case); range_name = 'decode_step' (name of the enclosing range: prefill, decode_step, layer, ...); occurrence = 1 (which occurrence, 1-based, in time order)
-- columns: name (slice name), category (op category, or range), depth (levels below the window range), n (slices), total_ms (ms), avg_us (per slice, us), share (of the window range's duration, 0..1)

-- The parameterised form of the classic trace-processor question "which ops inside this window
-- take the time, and how many calls each": every slice on the case's tracks that starts inside
-- the window range, except the range itself. Nested ranges (layer) are listed too, at their
-- depth, so shares of one depth add up to at most 1.
WITH target AS (
  SELECT COALESCE(:case_id, (SELECT MAX(case_id) FROM track)) AS case_id
),
case_tracks AS (
  SELECT t.id FROM track AS t JOIN target ON t.case_id = target.case_id
  WHERE t.type IS NOT 'gpu'  -- ops, not their kernels (kernel_by_nvtx_range has those)
),
win AS (
  SELECT id, ts AS t0, ts + dur AS t1, dur, depth
  FROM slice
  WHERE track_id IN (SELECT id FROM case_tracks) AND name = :range_name
  ORDER BY ts, id
  LIMIT 1 OFFSET MAX(:occurrence, 1) - 1
)
SELECT s.name, s.category, s.depth - win.depth AS depth, COUNT(*) AS n,
       SUM(s.dur) / 1e6 AS total_ms, AVG(s.dur) / 1e3 AS avg_us,
       SUM(s.dur) * 1.0 / NULLIF(win.dur, 0) AS share
FROM slice AS s, win
WHERE s.track_id IN (SELECT id FROM case_tracks)
  AND s.ts >= win.t0 AND s.ts < win.t1 AND s.id <> win.id
GROUP BY s.name, s.category, s.depth
ORDER BY total_ms DESC, s.name;
