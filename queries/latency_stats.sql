-- purpose: TTFT and decode-step (TPOT) distributions per case from the raw untraced samples: median, p90, p99, sample stdev
-- params: run_id = NULL (run.id; NULL: the latest run)
-- columns: case_id (bench_case.id), model (preset), batch (sequences), prompt_len (tokens), reps (measured repetitions), ttft_ms_median (ms), ttft_ms_p90 (ms), ttft_ms_stdev (sample stdev, ms), steps (decode steps over all repetitions), tpot_ms_median (ms), tpot_ms_p90 (ms), tpot_ms_p99 (ms), tpot_ms_stdev (sample stdev, ms), tpot_cv (stdev / mean: run-to-run noise)

-- Uses llmbench's median / percentile / stdev SQL functions (registered by `llmbench query`;
-- percentile interpolates linearly between ranks, as numpy does). Distributions are over raw
-- samples (bench_sample, bench_step), never over the per-case summaries.
WITH target AS (
  SELECT COALESCE(:run_id, (SELECT MAX(id) FROM run)) AS run_id
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
SELECT c.id AS case_id, c.model, c.batch, c.prompt_len,
       COALESCE(a.reps, 0) AS reps, a.p50 AS ttft_ms_median, a.p90 AS ttft_ms_p90,
       a.sd AS ttft_ms_stdev, COALESCE(d.steps, 0) AS steps, d.p50 AS tpot_ms_median,
       d.p90 AS tpot_ms_p90, d.p99 AS tpot_ms_p99, d.sd AS tpot_ms_stdev, d.cv AS tpot_cv
FROM bench_case AS c
JOIN target ON c.run_id = target.run_id
LEFT JOIN ttft AS a ON a.case_id = c.id
LEFT JOIN tpot AS d ON d.case_id = c.id
ORDER BY c.id;
