-- purpose: idle gaps between consecutive ops of a traced case (time no op covers inside a prefill or decode step): the total per phase, then the op pairs around the largest gaps
-- params: case_id = NULL (bench_case.id; NULL: the latest traced case); phase = NULL ('prefill' or 'decode'; NULL: both); top_n = 10 (op pairs listed per phase)
-- columns: phase (prefill|decode), prev_op (op before the gap; '(all)' on the phase's summary row), next_op (op after the gap), gaps (gaps per traced repetition), total_us (gap time per traced repetition, us), avg_us (per gap, us), max_us (the largest single gap, us), max_at_step (step of the largest gap: 0 prefill, 1.. decode), max_at_layer (layer of the largest gap; NULL outside layers), share (of the phase's traced time, 0..1)

-- A gap is an op's start minus the end of the op before it on the same track, within one phase
-- instance (one prefill or one decode step of one repetition): host work between ops,
-- instrumentation, kernel-launch latency. Gaps across step boundaries are left out because the
-- sampler and untraced repetitions run there. A negative gap means overlapping ops (e.g. two
-- device streams on one track).
WITH target AS (
  SELECT COALESCE(:case_id, (SELECT MAX(case_id) FROM track)) AS case_id
),
-- Read twice below; reading twice costs less than copying every row into a temporary table.
case_slices AS NOT MATERIALIZED (
  SELECT s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.rep, s.phase, s.step,
         s.layer
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
gaps AS MATERIALIZED (
  SELECT * FROM (
    SELECT phase, step, layer, name AS next_op,
           LAG(name) OVER w AS prev_op,
           ts - LAG(ts + dur) OVER w AS gap
    FROM case_slices
    WHERE category IS NOT 'range'
    WINDOW w AS (PARTITION BY track_id, rep, phase, step ORDER BY ts, id)
  )
  WHERE prev_op IS NOT NULL
),
-- With exactly one max() in a query, SQLite takes the bare columns step and layer from the row
-- that holds the maximum: where the largest gap happened.
summary AS (
  SELECT phase, '(all)' AS prev_op, '' AS next_op, COUNT(*) AS n, SUM(gap) AS total,
         AVG(gap) AS avg_gap, MAX(gap) AS max_gap, step AS max_step, layer AS max_layer
  FROM gaps
  GROUP BY phase
),
pairs AS (
  SELECT phase, prev_op, next_op, COUNT(*) AS n, SUM(gap) AS total, AVG(gap) AS avg_gap,
         MAX(gap) AS max_gap, step AS max_step, layer AS max_layer
  FROM gaps
  GROUP BY phase, prev_op, next_op
),
listed AS (
  SELECT *, 0 AS rank FROM summary
  UNION ALL
  SELECT * FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY phase ORDER BY total DESC, prev_op, next_op) AS rank
    FROM pairs
  )
  WHERE rank <= :top_n
)
SELECT l.phase, l.prev_op, l.next_op,
       CASE WHEN l.n % p.reps = 0 THEN l.n / p.reps ELSE l.n * 1.0 / p.reps END AS gaps,
       l.total / 1e3 / p.reps AS total_us, l.avg_gap / 1e3 AS avg_us, l.max_gap / 1e3 AS max_us,
       l.max_step AS max_at_step, l.max_layer AS max_at_layer,
       l.total * 1.0 / NULLIF(p.dur, 0) AS share
FROM listed AS l
JOIN phase_time AS p USING (phase)
ORDER BY l.phase = 'decode', l.phase, l.rank;
