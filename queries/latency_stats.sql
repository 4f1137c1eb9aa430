-- purpose: TTFT and decode-step (TPOT) distributions per case from the raw untraced samples: median, p90, p99, sample stdev
-- params: run_id = NULL (run.id; NULL: the latest run)
-- columns: case_id (bench_case.id), model (preset), dtype (weight type), backend (cpu|cuda), batch (sequences), prompt_len (tokens), max_new_tokens (tokens per sequence), variants (engine variants: default, or the non-default ones as qkv=permute kv_cache=paged/16; variants_label of bench_case.variants), n (measured repetitions), ttft_ms_p50 (ms), ttft_ms_p90 (ms), ttft_ms_stdev (sample stdev, ms), tpot_n (decode steps over all repetitions), tpot_ms_p50 (ms), tpot_ms_p90 (ms), tpot_ms_p99 (ms), tpot_ms_stdev (sample stdev, ms), tpot_cv (stdev / mean: run-to-run noise)

-- Uses llmbench's median / percentile / stdev SQL functions (registered by `llmbench query`;
-- percentile interpolates linearly between ranks, as numpy does). Distributions are over raw
-- samples (bench_sample, bench_step), never over the per-case summaries.
WITH target AS (  -- the run (default: the latest run) and the other shards of its sweep
  SELECT r.id AS run_id FROM run AS r
  WHERE COALESCE(r.run_group, r.id) = (
    SELECT COALESCE(g.run_group, g.id) FROM run AS g
    WHERE g.id = COALESCE(:run_id, (SELECT MAX(id) FROM run)))
),
run_cases AS (
  SELECT c.id FROM bench_case AS c JOIN target ON c.run_id = target.run_id
),
ttft AS (
  SELECT m.case_id, COUNT(*) AS reps, median(m.ttft_ns) / 1e6 AS p50,
         percentile(m.ttft_ns, 90) / 1e6 AS p90, stdev(m.ttft_ns) / 1e6 AS sd
  FROM bench_sample AS m
  WHERE m.case_id IN (SELECT id FROM run_cases)
  GROUP BY m.case_id
),
tpot AS (
  SELECT m.case_id, COUNT(*) AS steps, median(s.decode_ns) / 1e6 AS p50,
         percentile(s.decode_ns, 90) / 1e6 AS p90, percentile(s.decode_ns, 99) / 1e6 AS p99,
         stdev(s.decode_ns) / 1e6 AS sd, stdev(s.decode_ns) / AVG(s.decode_ns) AS cv
  FROM bench_step AS s
  JOIN bench_sample AS m ON m.id = s.sample_id
  WHERE m.case_id IN (SELECT id FROM run_cases)
  GROUP BY m.case_id
)
SELECT c.id AS case_id, c.model, c.dtype, c.backend, c.batch, c.prompt_len,
       c.max_new_tokens, variants_label(c.variants) AS variants,
       COALESCE(a.reps, 0) AS n, a.p50 AS ttft_ms_p50, a.p90 AS ttft_ms_p90,
       a.sd AS ttft_ms_stdev, COALESCE(d.steps, 0) AS tpot_n, d.p50 AS tpot_ms_p50,
       d.p90 AS tpot_ms_p90, d.p99 AS tpot_ms_p99, d.sd AS tpot_ms_stdev, d.cv AS tpot_cv
FROM bench_case AS c
JOIN target ON c.run_id = target.run_id
LEFT JOIN ttft AS a ON a.case_id = c.id
LEFT JOIN tpot AS d ON d.case_id = c.id
ORDER BY c.case_index, c.id;
