-- purpose: each op of a traced case against the roofline: achieved GB/s and GFLOP/s from its analytic bytes and FLOPs, the bound time at the run's peaks, and the fraction of that bound achieved
-- params: case_id = NULL (bench_case.id; NULL: the latest traced case); phase = NULL ('prefill' or 'decode'; NULL: both)
-- columns: phase (prefill|decode), name (op), category (op category), calls (calls per traced repetition), avg_us (time per call, us), flop_per_call (analytic FLOPs), bytes_per_call (analytic bytes read + written), intensity (FLOP per byte), achieved_gflops (GFLOP/s), achieved_gbps (GB/s), bound_us (roofline time per call at the case's roofs: max(flops / peak FLOP/s, bytes / peak bandwidth), us), limiter (compute|memory: the larger term of the bound), fraction_of_bound (bound time / measured time, 0..1; 1 is at the roofline), roof_check (ok, or why a fraction above 1 cannot be: the roof is too low)

-- The roofs are the ones the case's MBU and MFU divided by (bench_case.mfu_peak_tflops: the larger
-- of the compute probes beside the case and the cached GEMM peak; bench_case.mbu_peak_gbps: the
-- read probe beside it), falling back to the run's peaks (run.peak_tflops, run.peak_bandwidth_gbps)
-- where the case has none, so fraction_of_bound is the per-op counterpart of MBU/MFU. flops/ns is
-- GFLOP/s and bytes/ns is GB/s. Ops with neither FLOPs nor bytes recorded get NULL rates. A
-- fraction above 1 is never silent: roof_check names it.
WITH target AS (
  SELECT COALESCE(:case_id, (SELECT MAX(case_id) FROM track)) AS case_id
),
peaks AS (
  SELECT COALESCE(c.mfu_peak_tflops, r.peak_tflops) * 1e3 AS flop_per_ns,
         COALESCE(c.mbu_peak_gbps, r.peak_bandwidth_gbps) AS bytes_per_ns
  FROM bench_case AS c
  JOIN run AS r ON r.id = c.run_id
  JOIN target ON c.id = target.case_id
),
ops AS (
  SELECT s.phase, s.name, s.category, s.rep, s.dur,
         COALESCE(s.flops, 0) AS flops, COALESCE(s.bytes, 0) AS bytes,
         MAX(COALESCE(s.flops, 0) / NULLIF(p.flop_per_ns, 0),
             COALESCE(s.bytes, 0) / NULLIF(p.bytes_per_ns, 0)) AS bound_ns,
         COALESCE(s.flops, 0) / NULLIF(p.flop_per_ns, 0)
           >= COALESCE(s.bytes, 0) / NULLIF(p.bytes_per_ns, 0) AS compute_bound
  FROM slice AS s
  JOIN track AS t ON t.id = s.track_id
  JOIN target ON t.case_id = target.case_id
  CROSS JOIN peaks AS p
  WHERE s.category IS NOT 'range' AND (:phase IS NULL OR s.phase = :phase)
    AND t.type IS NOT 'gpu'  -- ops, not their kernels
)
SELECT phase, name, category,
       COUNT(*) * 1.0 / MAX(1, COUNT(DISTINCT rep)) AS calls,
       AVG(dur) / 1e3 AS avg_us,
       AVG(flops) AS flop_per_call,
       AVG(bytes) AS bytes_per_call,
       SUM(flops) * 1.0 / NULLIF(SUM(bytes), 0) AS intensity,
       NULLIF(SUM(flops), 0) * 1.0 / NULLIF(SUM(dur), 0) AS achieved_gflops,
       NULLIF(SUM(bytes), 0) * 1.0 / NULLIF(SUM(dur), 0) AS achieved_gbps,
       NULLIF(AVG(bound_ns), 0) / 1e3 AS bound_us,
       CASE WHEN SUM(flops) + SUM(bytes) = 0 THEN NULL
            WHEN SUM(compute_bound) * 2 >= COUNT(*) THEN 'compute' ELSE 'memory' END AS limiter,
       NULLIF(SUM(bound_ns), 0) / NULLIF(SUM(dur), 0) AS fraction_of_bound,
       CASE WHEN NULLIF(SUM(bound_ns), 0) / NULLIF(SUM(dur), 0) > 1
            THEN 'above the roof: a peak is stale; run `llmbench roofline` on a quiet machine'
            ELSE 'ok' END AS roof_check
FROM ops
GROUP BY phase, name, category
ORDER BY phase = 'decode', phase, SUM(dur) DESC, name;
