-- purpose: engine steps of a `serve --db` session by kind (prefill only, mixed prefill and decode, decode only): how many, their rows, step time percentiles and the scheduler's host overhead (step time outside the forward pass)
-- params: session_id = NULL (serve_session.id; NULL: the latest session)
-- columns: kind (prefill|mixed|decode), steps (count), prefill_tokens_mean (prompt rows per step), decode_rows_mean (decode rows per step), seqs_mean (sequences per step), step_ms_p50 (ms), step_ms_p90 (ms), step_ms_p99 (ms), step_ms_max (ms), forward_ms_p50 (ms), host_us_p50 (step - forward, median, us), host_share (sum of host time / sum of step time, 0..1), busy_s (sum of step time, s)

-- Uses llmbench's median / percentile SQL functions (registered by `llmbench query`). The
-- host time is what Scheduler::step spends outside RaggedForward::step: building the ragged
-- batch and block table, admission, and the results (docs/serving.md).
WITH target AS (
  SELECT COALESCE(:session_id, (SELECT MAX(id) FROM serve_session)) AS session_id
),
steps AS (
  SELECT s.*,
         CASE WHEN s.decode_rows = 0 THEN 'prefill'
              WHEN s.prefill_tokens = 0 THEN 'decode'
              ELSE 'mixed' END AS kind
  FROM serve_step AS s JOIN target ON s.session_id = target.session_id
)
SELECT kind, COUNT(*) AS steps,
       AVG(prefill_tokens) AS prefill_tokens_mean,
       AVG(decode_rows) AS decode_rows_mean,
       AVG(seqs) AS seqs_mean,
       median(dur_ns) / 1e6 AS step_ms_p50,
       percentile(dur_ns, 90) / 1e6 AS step_ms_p90,
       percentile(dur_ns, 99) / 1e6 AS step_ms_p99,
       MAX(dur_ns) / 1e6 AS step_ms_max,
       median(forward_ns) / 1e6 AS forward_ms_p50,
       median(dur_ns - forward_ns) / 1e3 AS host_us_p50,
       CAST(SUM(dur_ns - forward_ns) AS REAL) / SUM(dur_ns) AS host_share,
       SUM(dur_ns) / 1e9 AS busy_s
FROM steps
GROUP BY kind
ORDER BY CASE kind WHEN 'prefill' THEN 0 WHEN 'mixed' THEN 1 ELSE 2 END;
