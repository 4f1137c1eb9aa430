-- purpose: llmbench's decode GEMM ops beside PyTorch's kernels for the same weights, per decode step: an llmbench trace (run --trace ops) against an imported torch.profiler trace of transformers' Llama whose nn.Linear modules ran inside record_function ranges named after them, as scripts/gpu_torch_peer.py records it
-- params: case_id = NULL (bench_case.id of the llmbench trace; NULL: the latest traced case); import_id = NULL (import.id of the PyTorch trace; NULL: the latest import); step_range = 'decode_step' (the record_function range around each traced torch decode step)
-- columns: op (llmbench's op; torch's q_proj + k_proj + v_proj count as qkv_proj and gate_proj + up_proj as gate_up_proj, the same weights; 'total' sums the five), llmbench_us (the op's device time per decode step, all layers, us), torch_us (device time per decode step of the kernels launched inside the module's range, all layers, us), ratio (llmbench_us / torch_us), llmbench_calls (op calls per decode step), torch_kernels (kernels per decode step), llmbench_steps (decode steps in the llmbench trace), torch_steps (step ranges in the import)

-- llmbench's side: the gemm ops of the case's decode phase; its steps are the distinct
-- (repetition, step) pairs they ran in, however the ranges are stored.
WITH target AS (
  SELECT COALESCE(:case_id, (SELECT MAX(case_id) FROM track)) AS case_id,
         COALESCE(:import_id, (SELECT MAX(id) FROM import)) AS import_id
),
ours_raw AS (
  SELECT s.name AS op, s.dur, s.rep, s.step
  FROM slice AS s
  JOIN track AS t ON t.id = s.track_id
  WHERE t.case_id = (SELECT case_id FROM target) AND s.phase = 'decode' AND s.category = 'gemm'
    AND s.name IN ('qkv_proj', 'o_proj', 'gate_up_proj', 'down_proj', 'lm_head')
),
ours AS (
  SELECT op, SUM(dur) AS dur, COUNT(*) AS n FROM ours_raw GROUP BY op
),
our_steps AS (
  SELECT COUNT(*) AS n FROM (SELECT DISTINCT rep, step FROM ours_raw)
),
-- PyTorch's side: each kernel of the import goes to the innermost record_function range
-- around the call that launched it (as in kernel_by_nvtx_range.sql).
kernels AS (
  SELECT id, dur, launch_id AS launch FROM device_op
  WHERE import_id = (SELECT import_id FROM target)
),
walk(op_id, dur, node) AS (
  SELECT k.id, k.dur, e.parent_id FROM kernels AS k JOIN event AS e ON e.id = k.launch
  UNION ALL
  SELECT w.op_id, w.dur, p.parent_id
  FROM walk AS w JOIN event AS p ON p.id = w.node
  WHERE COALESCE(p.category, '') NOT IN ('nvtx', 'user_annotation', 'range')
),
theirs AS (
  SELECT CASE WHEN r.name IN ('q_proj', 'k_proj', 'v_proj') THEN 'qkv_proj'
              WHEN r.name IN ('gate_proj', 'up_proj') THEN 'gate_up_proj'
              ELSE r.name END AS op,
         SUM(w.dur) AS dur, COUNT(*) AS n
  FROM walk AS w
  JOIN event AS r ON r.id = w.node
  WHERE COALESCE(r.category, '') IN ('nvtx', 'user_annotation', 'range')
    AND r.name IN ('q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj',
                   'lm_head')
  GROUP BY 1
),
their_steps AS (
  SELECT COUNT(*) AS n
  FROM slice AS s
  JOIN track AS t ON t.id = s.track_id
  WHERE t.import_id = (SELECT import_id FROM target) AND s.name = :step_range
    AND s.category IN ('user_annotation', 'nvtx')
),
ops(op, ord) AS (
  VALUES ('qkv_proj', 1), ('o_proj', 2), ('gate_up_proj', 3), ('down_proj', 4), ('lm_head', 5)
),
per_step AS (
  SELECT o.op, o.ord,
         ours.dur / 1e3 / NULLIF(os.n, 0) AS llmbench_us,
         theirs.dur / 1e3 / NULLIF(ts.n, 0) AS torch_us,
         ours.n * 1.0 / NULLIF(os.n, 0) AS llmbench_calls,
         theirs.n * 1.0 / NULLIF(ts.n, 0) AS torch_kernels,
         os.n AS llmbench_steps, ts.n AS torch_steps
  FROM ops AS o
  LEFT JOIN ours ON ours.op = o.op
  LEFT JOIN theirs ON theirs.op = o.op
  CROSS JOIN our_steps AS os
  CROSS JOIN their_steps AS ts
)
SELECT op, llmbench_us, torch_us, llmbench_us / NULLIF(torch_us, 0) AS ratio, llmbench_calls,
       torch_kernels, llmbench_steps, torch_steps
FROM (
  SELECT * FROM per_step
  UNION ALL
  SELECT 'total', 6, SUM(llmbench_us), SUM(torch_us), SUM(llmbench_calls), SUM(torch_kernels),
         MAX(llmbench_steps), MAX(torch_steps)
  FROM per_step
)
WHERE llmbench_steps > 0 OR torch_steps > 0  -- no rows when neither trace is there
ORDER BY ord;
