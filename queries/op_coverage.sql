-- purpose: how much of each traced step its ops account for, and how the traced step compares with the untraced one: per traced case and phase, the mean traced step, the mean per-step sum of op times and the untraced TTFT (prefill) or TPOT (decode) of the same case
-- params: run_id = NULL (run.id; NULL: the latest run with a traced case)
-- columns: case_id (bench_case.id), variants (the case's non-default variants, or default), op_timer (device, cupti or host-nosync), phase (prefill|decode), steps (traced steps), step_ms (mean traced step, ms), ops_ms (mean per-step sum of op times, ms), untraced_ms (median untraced TTFT for prefill, mean untraced TPOT for decode, ms), ops_share (ops_ms / step_ms), ops_vs_untraced (ops_ms / untraced_ms), step_vs_untraced (step_ms / untraced_ms: the traced step's slowdown)

-- With --timer cupti an op's time is the device time of its kernels, so ops_vs_untraced near 1
-- says the op times account for the whole untraced step; with event pairs each op also carries
-- its launch gap. Ranges (prefill, decode_step, layer) are left out of the op sums.
WITH target AS (
  SELECT COALESCE(:run_id, (SELECT MAX(c.run_id) FROM bench_case AS c
                            JOIN track AS t ON t.case_id = c.id)) AS run_id
),
steps AS (
  SELECT s.case_id, s.phase, s.rep, s.step, s.dur AS step_dur
  FROM slice AS s
  JOIN bench_case AS c ON c.id = s.case_id
  JOIN target ON c.run_id = target.run_id
  WHERE s.depth = 0
),
op_sums AS (
  SELECT s.case_id, s.phase, s.rep, s.step, SUM(s.dur) AS ops_dur
  FROM slice AS s
  JOIN bench_case AS c ON c.id = s.case_id
  JOIN target ON c.run_id = target.run_id
  WHERE s.category IS NOT 'range'
  GROUP BY s.case_id, s.phase, s.rep, s.step
),
per_phase AS (
  SELECT st.case_id, st.phase, COUNT(*) AS n, AVG(st.step_dur) AS step_dur,
         AVG(COALESCE(o.ops_dur, 0)) AS ops_dur
  FROM steps AS st
  LEFT JOIN op_sums AS o USING (case_id, phase, rep, step)
  GROUP BY st.case_id, st.phase
)
SELECT p.case_id, variants_label(c.variants) AS variants,
       COALESCE(json_extract(c.variants, '$.timer'), 'device') AS op_timer,
       p.phase, p.n AS steps,
       p.step_dur / 1e6 AS step_ms,
       p.ops_dur / 1e6 AS ops_ms,
       CASE p.phase WHEN 'prefill' THEN c.ttft_ms_p50 ELSE c.tpot_ms_mean END AS untraced_ms,
       p.ops_dur / NULLIF(p.step_dur, 0) AS ops_share,
       p.ops_dur / 1e6 / NULLIF(CASE p.phase WHEN 'prefill' THEN c.ttft_ms_p50
                                             ELSE c.tpot_ms_mean END, 0) AS ops_vs_untraced,
       p.step_dur / 1e6 / NULLIF(CASE p.phase WHEN 'prefill' THEN c.ttft_ms_p50
                                              ELSE c.tpot_ms_mean END, 0) AS step_vs_untraced
FROM per_phase AS p
JOIN bench_case AS c ON c.id = p.case_id
ORDER BY p.case_id, p.phase = 'decode';
