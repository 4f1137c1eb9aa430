-- purpose: per run, engine variants and op, a least-squares fit of the op's time per prefill against batch size (slope, intercept, r^2) and its share of TTFT at the largest batch, steepest first, so that ops growing linearly with batch stand out
-- params: run_id = NULL (run.id; NULL: the latest run with a trace); max_new_tokens = NULL (fit only cases with this many new tokens, e.g. 1; NULL: every case, their prefill)
-- columns: run_id (run.id; the first run of the sweep when shards were merged), model (preset), backend (cpu or cuda), prompt_len (tokens), variants (engine variants: default, or the non-default ones as qkv=permute kv_cache=paged/16; variants_label of bench_case.variants), name (op), category (op category), batches (distinct batch sizes fitted), max_batch (sequences), us_at_max_batch (op time per prefill at the largest batch, us), slope_us_per_seq (least-squares us added per sequence), intercept_us (fitted time at batch 0, us), r2 (coefficient of determination; NULL with fewer than 3 batch sizes or a constant time), ttft_share_at_max_batch (op time / the traced prefill's time at the largest batch, 0..1)

-- One point per traced case: x = batch, y = the op's total time in the prefill (every call:
-- all layers), in us (as op_vs_batch), averaged over the case's traced repetitions. One fit per series: cases
-- of one run that differ only in batch (same model, dtype, backend, prompt length and
-- variants, so fused and permute or device and host-nosync timings are never mixed). SQLite
-- has no regression functions, so the fit is the closed form over SUM/COUNT aggregates:
--   slope = (n Sxy - Sx Sy) / (n Sxx - Sx^2),  intercept = (Sy - slope Sx) / n,
--   r^2   = (n Sxy - Sx Sy)^2 / ((n Sxx - Sx^2) (n Syy - Sy^2)).
-- A copy of the whole KV cache, a full-logits transfer or a permute is mostly slope: invisible
-- at batch 1, dominant at batch 16. With timer host-nosync in `variants`, y is host enqueue
-- time, wrong on purpose on CUDA (docs/variants.md).
WITH target AS (  -- the run (default: the latest run with a trace) and the other shards of its sweep
  SELECT r.id AS run_id FROM run AS r
  WHERE COALESCE(r.run_group, r.id) = (
    SELECT COALESCE(g.run_group, g.id) FROM run AS g
    WHERE g.id = COALESCE(:run_id, (SELECT MAX(c.run_id) FROM bench_case AS c
                   JOIN track AS t ON t.case_id = c.id)))
),
cases AS (
  SELECT c.id AS case_id, (SELECT MIN(run_id) FROM target) AS run_id, c.model, c.dtype, c.backend, c.prompt_len, c.variants,
         c.batch
  FROM bench_case AS c
  JOIN target ON c.run_id = target.run_id
  WHERE c.status = 'ok' AND (:max_new_tokens IS NULL OR c.max_new_tokens = :max_new_tokens)
),
prefill AS NOT MATERIALIZED (
  SELECT t.case_id, s.name, s.category, s.depth, s.rep, s.dur
  FROM slice AS s
  JOIN track AS t ON t.id = s.track_id
  WHERE t.case_id IN (SELECT case_id FROM cases) AND s.phase = 'prefill'
),
reps AS (  -- traced repetitions of each case and their mean prefill time (the traced TTFT)
  SELECT case_id, COUNT(DISTINCT COALESCE(rep, 0)) AS n_reps, AVG(dur) / 1e3 AS ttft_us
  FROM prefill
  WHERE depth = 0
  GROUP BY case_id
),
points AS (
  SELECT c.run_id, c.model, c.dtype, c.backend, c.prompt_len, c.variants, p.name, p.category,
         c.batch AS x, SUM(p.dur) / 1e3 / r.n_reps AS y, r.ttft_us
  FROM prefill AS p
  JOIN reps AS r USING (case_id)
  JOIN cases AS c USING (case_id)
  WHERE p.category IS NOT 'range'
  GROUP BY p.case_id, p.name, p.category
),
fit AS (
  SELECT run_id, model, dtype, backend, prompt_len, variants, name, category,
         COUNT(*) AS n, COUNT(DISTINCT x) AS batches, MAX(x) AS max_x,
         SUM(x) AS sx, SUM(y) AS sy, SUM(x * x) AS sxx, SUM(x * y) AS sxy, SUM(y * y) AS syy
  FROM points
  GROUP BY run_id, model, dtype, backend, prompt_len, variants, name, category
),
solved AS (
  SELECT f.*,
         (n * sxy - sx * sy) / NULLIF(n * sxx - sx * sx, 0) AS slope,
         (n * sxy - sx * sy) * (n * sxy - sx * sy)
           / NULLIF((n * sxx - sx * sx) * (n * syy - sy * sy), 0) AS r2_raw
  FROM fit AS f
),
at_max AS (  -- the op's time and the traced TTFT at the series' largest batch
  SELECT s.run_id, s.model, s.dtype, s.backend, s.prompt_len, s.variants, s.name,
         AVG(p.y) AS y_max, AVG(p.ttft_us) AS ttft_us_max
  FROM solved AS s
  JOIN points AS p ON p.run_id = s.run_id AND p.model = s.model AND p.dtype = s.dtype
                  AND p.backend = s.backend AND p.prompt_len = s.prompt_len
                  AND p.variants = s.variants AND p.name = s.name AND p.x = s.max_x
  GROUP BY s.run_id, s.model, s.dtype, s.backend, s.prompt_len, s.variants, s.name
)
SELECT s.run_id, s.model, s.backend, s.prompt_len, variants_label(s.variants) AS variants, s.name, s.category, s.batches,
       s.max_x AS max_batch, m.y_max AS us_at_max_batch, s.slope AS slope_us_per_seq,
       (s.sy - s.slope * s.sx) / s.n AS intercept_us,
       CASE WHEN s.batches >= 3 THEN s.r2_raw END AS r2,
       m.y_max / NULLIF(m.ttft_us_max, 0) AS ttft_share_at_max_batch
FROM solved AS s
JOIN at_max AS m ON m.run_id = s.run_id AND m.model = s.model AND m.dtype = s.dtype
                AND m.backend = s.backend AND m.prompt_len = s.prompt_len
                AND m.variants = s.variants AND m.name = s.name
ORDER BY slope_us_per_seq DESC, s.variants, s.name;
