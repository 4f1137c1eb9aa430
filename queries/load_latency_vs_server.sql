-- purpose: each request of one load level beside what the server reported at its arrival (--server-metrics): requests running and waiting and the KV-cache usage from the last /metrics scrape at or before the request was sent, so a slow TTFT can be read against the queue it met. Roles from the metric names of vLLM, SGLang, TGI, llama.cpp's server and llmbench serve (docs/serving.md, "Server metrics"); several series of one role (labels, engines) are summed (running, waiting) or averaged (KV usage)
-- params: level_id = NULL (load_level.id; NULL: the first level of the latest load run)
-- columns: level_id (load_level.id), request_index (0-based, in start order), status (ok|error), send_ms (ms since the level's origin), ttft_ms (ms), e2el_ms (ms), sample_ms (the scrape used, ms since the level's origin; NULL: none before the request), sample_age_ms (send_ms - sample_ms), running (requests), waiting (requests), kv_usage (fraction of the KV cache in use, 0-1)

WITH target AS (
  SELECT COALESCE(:level_id,
                  (SELECT id FROM load_level
                   WHERE load_run_id = (SELECT MAX(id) FROM load_run)
                   ORDER BY level_index LIMIT 1)) AS id
),
series AS (
  SELECT t.id AS track_id,
         CASE WHEN instr(t.name, '{') > 0 THEN substr(t.name, 1, instr(t.name, '{') - 1)
              ELSE t.name END AS metric
  FROM track AS t
  WHERE t.type = 'counter' AND t.load_level_id = (SELECT id FROM target)
),
role_series AS (
  SELECT track_id,
         CASE
           WHEN metric IN ('vllm:num_requests_running', 'sglang:num_running_reqs',
                           'tgi_batch_current_size', 'llamacpp:requests_processing',
                           'llmbench_requests_running') THEN 'running'
           WHEN metric IN ('vllm:num_requests_waiting', 'sglang:num_queue_reqs', 'tgi_queue_size',
                           'llamacpp:requests_deferred', 'llmbench_requests_waiting') THEN 'waiting'
           WHEN metric IN ('vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc',
                           'sglang:token_usage', 'llamacpp:kv_cache_usage_ratio') THEN 'kv_usage'
           WHEN metric = 'llmbench_kv_blocks_used' THEN 'kv_used'
           WHEN metric = 'llmbench_kv_blocks_total' THEN 'kv_total'
         END AS role
  FROM series
),
scrape AS MATERIALIZED (
  SELECT c.ts,
         SUM(CASE WHEN r.role = 'running' THEN c.value END) AS running,
         SUM(CASE WHEN r.role = 'waiting' THEN c.value END) AS waiting,
         COALESCE(AVG(CASE WHEN r.role = 'kv_usage' THEN c.value END),
                  SUM(CASE WHEN r.role = 'kv_used' THEN c.value END) /
                      NULLIF(SUM(CASE WHEN r.role = 'kv_total' THEN c.value END), 0)) AS kv_usage
  FROM counter AS c JOIN role_series AS r ON r.track_id = c.track_id
  WHERE r.role IS NOT NULL
  GROUP BY c.ts
)
SELECT q.level_id, q.request_index, q.status, q.send_ns / 1e6 AS send_ms,
       q.ttft_ns / 1e6 AS ttft_ms, q.e2el_ns / 1e6 AS e2el_ms, s.ts / 1e6 AS sample_ms,
       (q.send_ns - s.ts) / 1e6 AS sample_age_ms, s.running, s.waiting, s.kv_usage
FROM load_request AS q
LEFT JOIN scrape AS s ON s.ts = (SELECT MAX(ts) FROM scrape WHERE ts <= q.send_ns)
WHERE q.level_id = (SELECT id FROM target)
ORDER BY q.request_index;
