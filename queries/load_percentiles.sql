-- purpose: every serving latency of a load run's levels in full: n, mean, sample stdev, p50, p90, p95, p99 of TTFT, TPOT, ITL and E2EL (ms), one row per level and metric
-- params: load_run_id = NULL (load_run.id; NULL: the latest load run)
-- columns: level_id (load_level.id), level (c4 in128 out128, ...), metric (ttft_ms | tpot_ms | itl_ms | e2el_ms), n (samples: ok requests, or chunk gaps for itl_ms), mean (ms), stdev (sample stdev, ms), p50 (ms), p90 (ms), p95 (ms), p99 (ms)

-- TTFT, TPOT and E2EL have one sample per ok request (TPOT only with 2+ output tokens); ITL one
-- per gap between consecutive output chunks of ok requests. docs/metrics.md, "Serving metrics".
WITH target AS (
  SELECT id FROM load_level
  WHERE load_run_id = COALESCE(:load_run_id, (SELECT MAX(id) FROM load_run))
),
samples AS (
  SELECT q.level_id, 'ttft_ms' AS metric, 1 AS k, q.ttft_ns / 1e6 AS v FROM load_request AS q
  WHERE q.level_id IN (SELECT id FROM target) AND q.status = 'ok'
  UNION ALL
  SELECT q.level_id, 'tpot_ms', 2, q.tpot_ns / 1e6 FROM load_request AS q
  WHERE q.level_id IN (SELECT id FROM target) AND q.status = 'ok' AND q.tpot_ns IS NOT NULL
  UNION ALL
  SELECT q.level_id, 'itl_ms', 3, c.itl_ns / 1e6 FROM load_chunk AS c
  JOIN load_request AS q ON q.id = c.request_id
  WHERE q.level_id IN (SELECT id FROM target) AND q.status = 'ok' AND c.itl_ns IS NOT NULL
  UNION ALL
  SELECT q.level_id, 'e2el_ms', 4, q.e2el_ns / 1e6 FROM load_request AS q
  WHERE q.level_id IN (SELECT id FROM target) AND q.status = 'ok'
)
SELECT s.level_id, l.level, s.metric, COUNT(*) AS n, AVG(s.v) AS mean, stdev(s.v) AS stdev,
       median(s.v) AS p50, percentile(s.v, 90) AS p90, percentile(s.v, 95) AS p95,
       percentile(s.v, 99) AS p99
FROM samples AS s JOIN load_level AS l ON l.id = s.level_id
GROUP BY s.level_id, s.metric
ORDER BY l.level_index, MIN(s.k);
