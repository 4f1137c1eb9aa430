-- purpose: time of each decoder layer split by op category, per prefill or per decode step, for a traced case
-- params: case_id = NULL (bench_case.id; NULL: the latest traced case); phase = 'decode' ('prefill': per prefill; 'decode': per decode step)
-- columns: layer (index; NULL: the ops outside any layer, e.g. embedding and lm_head), layer_us (the layer range, us; NULL outside layers), gemm_us (us), attention_us (us), norm_us (us), elementwise_us (us), copy_us (us), other_us (transfer, sample and any other category, us), untracked_us (layer time covered by no op: gaps and instrumentation, us), gemm_share (gemm_us over the ops' total, 0..1)

-- All times are means per phase instance (one prefill, or one decode step) over traced
-- repetitions, so the rows of a decode breakdown add up to about one TPOT.
WITH target AS (
  SELECT COALESCE(:case_id, (SELECT MAX(case_id) FROM track)) AS case_id
),
-- Read twice below; reading twice costs less than copying every row into a temporary table.
case_slices AS NOT MATERIALIZED (
  SELECT s.name, s.category, s.depth, s.layer, s.dur
  FROM slice AS s
  JOIN track AS t ON t.id = s.track_id
  JOIN target ON t.case_id = target.case_id
  WHERE s.phase = :phase
),
instances AS (
  SELECT MAX(1, COUNT(*)) AS n FROM case_slices WHERE depth = 0
),
layer_ranges AS (
  SELECT layer, SUM(dur) AS dur
  FROM case_slices
  WHERE category = 'range' AND layer IS NOT NULL
  GROUP BY layer
),
op_sums AS (
  SELECT layer,
         SUM(dur) AS total,
         SUM(CASE WHEN category = 'gemm' THEN dur ELSE 0 END) AS gemm,
         SUM(CASE WHEN category = 'attention' THEN dur ELSE 0 END) AS attention,
         SUM(CASE WHEN category = 'norm' THEN dur ELSE 0 END) AS norm,
         SUM(CASE WHEN category = 'elementwise' THEN dur ELSE 0 END) AS elementwise,
         SUM(CASE WHEN category = 'copy' THEN dur ELSE 0 END) AS copy,
         SUM(CASE WHEN category NOT IN ('gemm', 'attention', 'norm', 'elementwise', 'copy')
                    OR category IS NULL THEN dur ELSE 0 END) AS other
  FROM case_slices
  WHERE category IS NOT 'range'
  GROUP BY layer
)
SELECT o.layer, r.dur / 1e3 / i.n AS layer_us,
       o.gemm / 1e3 / i.n AS gemm_us, o.attention / 1e3 / i.n AS attention_us,
       o.norm / 1e3 / i.n AS norm_us, o.elementwise / 1e3 / i.n AS elementwise_us,
       o.copy / 1e3 / i.n AS copy_us, o.other / 1e3 / i.n AS other_us,
       (r.dur - o.total) / 1e3 / i.n AS untracked_us,
       o.gemm * 1.0 / NULLIF(o.total, 0) AS gemm_share
FROM op_sums AS o
CROSS JOIN instances AS i
LEFT JOIN layer_ranges AS r ON r.layer = o.layer
ORDER BY o.layer IS NULL, o.layer;
