-- purpose: serving benchmark summary per level of a load run: requests, errors, request and token throughput, TTFT / TPOT / ITL / E2EL medians and p99s, as `llmbench load` prints them
-- params: load_run_id = NULL (load_run.id; NULL: the latest load run)
-- columns: load_run_id (load_run.id), label (--label: the server), level_id (load_level.id), level (c4 in128 out128, r8 b1 in128 out128, ...), concurrency (requests in flight; NULL for rate levels), request_rate (requests/s; NULL for concurrency levels), requests (measured requests), failed (requests with status error), duration_s (earliest send to latest end, s), request_throughput (ok requests / duration, req/s), output_tok_s (output tokens of ok requests / duration), total_tok_s ((input + output tokens of ok requests) / duration), ttft_ms_p50 (ms), ttft_ms_p99 (ms), tpot_ms_p50 (ms), tpot_ms_p99 (ms), itl_ms_p50 (ms, over every gap between output chunks), itl_ms_p99 (ms), e2el_ms_p50 (ms), e2el_ms_p99 (ms)

-- Percentiles are llmbench's (linear interpolation between ranks, as numpy's default): the same
-- numbers `llmbench load` prints. Definitions: docs/metrics.md, "Serving metrics".
WITH target AS (
  SELECT id FROM load_run WHERE id = COALESCE(:load_run_id, (SELECT MAX(id) FROM load_run))
),
req AS (
  SELECT q.level_id,
         SUM(q.status = 'ok') AS ok,
         SUM(CASE WHEN q.status = 'ok' THEN q.output_tokens END) AS out_tokens,
         SUM(CASE WHEN q.status = 'ok' THEN COALESCE(q.prompt_tokens, q.input_len) END) AS in_tokens,
         median(q.ttft_ns) / 1e6 AS ttft_p50, percentile(q.ttft_ns, 99) / 1e6 AS ttft_p99,
         median(q.tpot_ns) / 1e6 AS tpot_p50, percentile(q.tpot_ns, 99) / 1e6 AS tpot_p99,
         median(q.e2el_ns) / 1e6 AS e2el_p50, percentile(q.e2el_ns, 99) / 1e6 AS e2el_p99
  FROM load_request AS q JOIN load_level AS l ON l.id = q.level_id
  WHERE l.load_run_id IN (SELECT id FROM target)
  GROUP BY q.level_id
),
itl AS (
  SELECT q.level_id, median(c.itl_ns) / 1e6 AS p50, percentile(c.itl_ns, 99) / 1e6 AS p99
  FROM load_chunk AS c JOIN load_request AS q ON q.id = c.request_id
  JOIN load_level AS l ON l.id = q.level_id
  WHERE l.load_run_id IN (SELECT id FROM target) AND q.status = 'ok' AND c.itl_ns IS NOT NULL
  GROUP BY q.level_id
)
SELECT r.id AS load_run_id, r.label, l.id AS level_id, l.level, l.concurrency, l.request_rate,
       l.requests, l.failed, l.duration_ns / 1e9 AS duration_s,
       req.ok / (l.duration_ns / 1e9) AS request_throughput,
       req.out_tokens / (l.duration_ns / 1e9) AS output_tok_s,
       (req.in_tokens + req.out_tokens) / (l.duration_ns / 1e9) AS total_tok_s,
       req.ttft_p50 AS ttft_ms_p50, req.ttft_p99 AS ttft_ms_p99,
       req.tpot_p50 AS tpot_ms_p50, req.tpot_p99 AS tpot_ms_p99,
       itl.p50 AS itl_ms_p50, itl.p99 AS itl_ms_p99,
       req.e2el_p50 AS e2el_ms_p50, req.e2el_p99 AS e2el_ms_p99
FROM load_level AS l
JOIN load_run AS r ON r.id = l.load_run_id
LEFT JOIN req ON req.level_id = l.id
LEFT JOIN itl ON itl.level_id = l.id
WHERE l.load_run_id IN (SELECT id FROM target)
ORDER BY l.level_index;
