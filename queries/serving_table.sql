-- purpose: the frameworks comparison table: one row per server (--label) and request shape, with output tokens/s (TPS), requests/s (QPS) and median first-token latency (FTL) at concurrency 1 and 4 (and 16), from each label's latest load run; merge databases of several servers for one table
-- params: none
-- columns: label (--label: the server), model (model name sent), prompt_kind (token_ids|text|chat: what the prompts were), input_len (mean prompt tokens asked for), output_len (mean max_tokens), prompt_tokens_run (mean prompt tokens the server ran, from its usage; NULL when it reported none), output_tokens_run (mean completion tokens the server ran, from its usage; NULL when none), tps_at_1 (output tokens/s at concurrency 1), qps_at_1 (ok requests/s at concurrency 1), ftl_ms_at_1 (median TTFT at concurrency 1, ms), tps_at_4 (output tokens/s at concurrency 4, all streams together), qps_at_4 (ok requests/s at concurrency 4), ftl_ms_at_4 (median TTFT at concurrency 4, ms), tps_at_16 (output tokens/s at concurrency 16), qps_at_16 (ok requests/s at concurrency 16), ftl_ms_at_16 (median TTFT at concurrency 16, ms), load_run_id (the load run the row comes from)

-- A cell is NULL when the label's latest run has no level at that concurrency. TPS@c counts
-- every stream's output tokens over the level's duration (per user: TPS@c / c).
-- docs/metrics.md, "Serving metrics"; docs/serving.md shows the table of a real run.
WITH latest AS (
  SELECT label, MAX(id) AS id FROM load_run GROUP BY label
),
lv AS (
  SELECT r.label, r.model, r.prompt_kind, r.id AS load_run_id, l.input_len, l.output_len,
         l.concurrency,
         SUM(CASE WHEN q.status = 'ok' THEN q.prompt_tokens END) AS prompt_tokens_sum,
         SUM(CASE WHEN q.status = 'ok' THEN q.completion_tokens END) AS completion_tokens_sum,
         SUM(q.status = 'ok' AND q.prompt_tokens IS NOT NULL) AS prompt_tokens_n,
         SUM(q.status = 'ok' AND q.completion_tokens IS NOT NULL) AS completion_tokens_n,
         SUM(CASE WHEN q.status = 'ok' THEN q.output_tokens END) / (l.duration_ns / 1e9) AS tps,
         SUM(q.status = 'ok') / (l.duration_ns / 1e9) AS qps,
         median(q.ttft_ns) / 1e6 AS ftl_ms
  FROM latest JOIN load_run AS r ON r.id = latest.id
  JOIN load_level AS l ON l.load_run_id = r.id
  JOIN load_request AS q ON q.level_id = l.id
  WHERE l.concurrency IS NOT NULL
  GROUP BY l.id
)
SELECT label, model, prompt_kind, input_len, output_len,
       SUM(prompt_tokens_sum) * 1.0 / NULLIF(SUM(prompt_tokens_n), 0) AS prompt_tokens_run,
       SUM(completion_tokens_sum) * 1.0 / NULLIF(SUM(completion_tokens_n), 0) AS output_tokens_run,
       MAX(CASE WHEN concurrency = 1 THEN tps END) AS tps_at_1,
       MAX(CASE WHEN concurrency = 1 THEN qps END) AS qps_at_1,
       MAX(CASE WHEN concurrency = 1 THEN ftl_ms END) AS ftl_ms_at_1,
       MAX(CASE WHEN concurrency = 4 THEN tps END) AS tps_at_4,
       MAX(CASE WHEN concurrency = 4 THEN qps END) AS qps_at_4,
       MAX(CASE WHEN concurrency = 4 THEN ftl_ms END) AS ftl_ms_at_4,
       MAX(CASE WHEN concurrency = 16 THEN tps END) AS tps_at_16,
       MAX(CASE WHEN concurrency = 16 THEN qps END) AS qps_at_16,
       MAX(CASE WHEN concurrency = 16 THEN ftl_ms END) AS ftl_ms_at_16,
       load_run_id
FROM lv
GROUP BY label, model, prompt_kind, input_len, output_len, load_run_id
ORDER BY label, input_len, output_len;
