-- purpose: how each op's time per prefill (or per decode step) grows with batch size across a run's traced cases: least-squares slope, intercept, r^2
-- params: run_id = NULL (run.id; NULL: the latest run with a trace); phase = 'prefill' ('prefill': time per prefill; 'decode': time per decode step)
-- columns: model (preset), prompt_len (tokens), variants (engine variants: default, or the non-default ones as qkv=permute kv_cache=paged/16; variants_label of bench_case.variants), name (op), category (op category), batches (distinct batch sizes fitted), min_batch (sequences), max_batch (sequences), us_at_min_batch (op time per phase instance at the smallest batch, us), us_at_max_batch (at the largest batch, us), slope_us_per_seq (least-squares us added per sequence), intercept_us (fitted time at batch 0, us), r2 (coefficient of determination; NULL with fewer than 3 batch sizes or constant time), share_at_max_batch (of the phase's traced time at the largest batch: TTFT for prefill, TPOT for decode, 0..1)

-- An op whose time is mostly slope (a copy of the whole KV cache, a full-logits transfer, a
-- permute) grows linearly with batch and dominates large batches even when it is invisible at
-- batch 1; sorting by slope puts those first. One fit per (model, dtype, backend, prompt_len,
-- variants) series, so cases that differ in more than batch are never mixed. A "phase instance" is one
-- depth-0 range: the prefill, or one decode step; times are means over instances and traced
-- repetitions.
WITH target AS (  -- the run (default: the latest run with a trace) and the other shards of its sweep
  SELECT r.id AS run_id FROM run AS r
  WHERE COALESCE(r.run_group, r.id) = (
    SELECT COALESCE(g.run_group, g.id) FROM run AS g
    WHERE g.id = COALESCE(:run_id, (SELECT MAX(c.run_id) FROM bench_case AS c
                   JOIN track AS t ON t.case_id = c.id)))
),
cases AS (
  SELECT c.id AS case_id, c.model, c.dtype, c.backend, c.prompt_len, c.variants, c.batch
  FROM bench_case AS c
  JOIN target ON c.run_id = target.run_id
),
-- Read twice below; reading twice costs less than copying every row into a temporary table.
case_slices AS NOT MATERIALIZED (
  SELECT t.case_id, s.name, s.category, s.depth, s.dur
  FROM slice AS s
  JOIN track AS t ON t.id = s.track_id
  WHERE t.case_id IN (SELECT case_id FROM cases) AND s.phase = :phase
),
instances AS (
  SELECT case_id, COUNT(*) AS n, SUM(dur) / 1e3 / COUNT(*) AS phase_us
  FROM case_slices
  WHERE depth = 0
  GROUP BY case_id
),
points AS (
  SELECT c.model, c.dtype, c.backend, c.prompt_len, c.variants, c.batch AS x, s.name,
         s.category,
         SUM(s.dur) / 1e3 / i.n AS y, i.phase_us
  FROM case_slices AS s
  JOIN instances AS i USING (case_id)
  JOIN cases AS c USING (case_id)
  WHERE s.category IS NOT 'range'
  GROUP BY s.case_id, s.name, s.category
),
fit AS (
  SELECT model, dtype, backend, prompt_len, variants, name, category,
         COUNT(*) AS n, COUNT(DISTINCT x) AS batches, MIN(x) AS min_x, MAX(x) AS max_x,
         SUM(x) AS sx, SUM(y) AS sy, SUM(x * x) AS sxx, SUM(x * y) AS sxy, SUM(y * y) AS syy
  FROM points
  GROUP BY model, dtype, backend, prompt_len, variants, name, category
),
solved AS (
  SELECT f.*,
         (n * sxy - sx * sy) / NULLIF(n * sxx - sx * sx, 0) AS slope,
         (n * sxy - sx * sy) * (n * sxy - sx * sy)
           / NULLIF((n * sxx - sx * sx) * (n * syy - sy * sy), 0) AS r2_raw
  FROM fit AS f
),
at_ends AS (  -- mean op time and phase time at the smallest and largest batch of each series
  SELECT s.model, s.dtype, s.backend, s.prompt_len, s.variants, s.name,
         AVG(CASE WHEN p.x = s.min_x THEN p.y END) AS y_min,
         AVG(CASE WHEN p.x = s.max_x THEN p.y END) AS y_max,
         AVG(CASE WHEN p.x = s.max_x THEN p.phase_us END) AS phase_us_max
  FROM solved AS s
  JOIN points AS p ON p.model = s.model AND p.dtype = s.dtype AND p.backend = s.backend
                  AND p.prompt_len = s.prompt_len AND p.variants = s.variants
                  AND p.name = s.name
  GROUP BY s.model, s.dtype, s.backend, s.prompt_len, s.variants, s.name
)
SELECT s.model, s.prompt_len, variants_label(s.variants) AS variants, s.name, s.category, s.batches, s.min_x AS min_batch,
       s.max_x AS max_batch, e.y_min AS us_at_min_batch, e.y_max AS us_at_max_batch,
       s.slope AS slope_us_per_seq,
       (s.sy - s.slope * s.sx) / s.n AS intercept_us,
       CASE WHEN s.batches >= 3 THEN s.r2_raw END AS r2,
       e.y_max / NULLIF(e.phase_us_max, 0) AS share_at_max_batch
FROM solved AS s
JOIN at_ends AS e ON e.model = s.model AND e.dtype = s.dtype AND e.backend = s.backend
                 AND e.prompt_len = s.prompt_len AND e.variants = s.variants
                 AND e.name = s.name
ORDER BY s.model, s.prompt_len, s.variants, slope_us_per_seq DESC, s.name;
