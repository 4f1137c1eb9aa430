-- purpose: ops ranked by total time within each phase (prefill, decode) of a traced case, per traced repetition
-- params: case_id = NULL (bench_case.id; NULL: the latest traced case); phase = NULL ('prefill' or 'decode'; NULL: both); top_n = 20 (ops listed per phase)
-- columns: case_id (bench_case.id), phase (prefill|decode), name (op), category (gemm|attention|norm|elementwise|copy|transfer|sample), calls (calls per traced repetition), total_ms (time per traced repetition, ms), avg_us (time per call, us), share (of the phase's traced time, 0..1)

-- Ops are the slices that are not ranges (prefill, decode_step and layer are ranges). Phase
-- time is the sum of the phase's depth-0 ranges, so share also shows how much of a step no op
-- covers (the remainder is gaps and instrumentation; see op_gaps). Totals are divided by the
-- number of traced repetitions so they read as "per request" whatever --repeat was.
WITH target AS (
  SELECT COALESCE(:case_id, (SELECT MAX(case_id) FROM track)) AS case_id
),
-- Read twice below; reading twice costs less than copying every row into a temporary table.
case_slices AS NOT MATERIALIZED (
  SELECT s.phase, s.name, s.category, s.depth, s.rep, s.dur
  FROM slice AS s
  JOIN track AS t ON t.id = s.track_id
  JOIN target ON t.case_id = target.case_id
  WHERE (:phase IS NULL OR s.phase = :phase) AND t.type IS NOT 'gpu'  -- ops, not their kernels
),
phase_time AS (
  SELECT phase, SUM(dur) AS dur, MAX(1, COUNT(DISTINCT rep)) AS reps
  FROM case_slices
  WHERE depth = 0
  GROUP BY phase
),
ops AS (
  SELECT phase, name, category, COUNT(*) AS n, SUM(dur) AS dur, AVG(dur) AS avg_dur
  FROM case_slices
  WHERE category IS NOT 'range'
  GROUP BY phase, name, category
),
ranked AS (
  SELECT o.*, p.dur AS phase_dur, p.reps,
         ROW_NUMBER() OVER (PARTITION BY o.phase ORDER BY o.dur DESC, o.name) AS rank
  FROM ops AS o
  JOIN phase_time AS p USING (phase)
)
SELECT (SELECT case_id FROM target) AS case_id, phase, name, category,
       CASE WHEN n % reps = 0 THEN n / reps ELSE n * 1.0 / reps END AS calls,
       dur / 1e6 / reps AS total_ms,
       avg_dur / 1e3 AS avg_us,
       dur * 1.0 / NULLIF(phase_dur, 0) AS share
FROM ranked
WHERE rank <= :top_n
ORDER BY phase = 'decode', phase, rank;
