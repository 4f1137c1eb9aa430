-- purpose: launch overhead per NVTX / record_function range name: the range's host time minus the device time of the kernels launched inside it (time the GPU work does not explain)
-- params: import_id = NULL (import.id; NULL: the latest import, or the latest traced case when the database holds no import); case_id = NULL (bench_case.id: read this llmbench trace instead of an import)
-- columns: name (range name), category (nvtx, user_annotation or range), n (ranges that launched at least one op), ops (kernels, copies and sets launched inside, summed), range_us (host time of the ranges, us), op_us (device time of their ops, us), overhead_us (range_us - op_us), overhead_per_range_us (overhead_us / n), overhead_share (overhead_us / range_us, 0..1; negative when device work overlaps)

-- Kernels are tied to a range through their launch (see kernel_by_nvtx_range.sql), counting
-- those of nested ranges too. A large share means the range spends its time launching,
-- synchronising or on the host, not waiting for kernels: the classic small-kernel decode step.
-- device_op (a view of the schema, docs/schema.md): the device work of every trace, with the
-- host slice that launched it; `latest` marks the default trace.
WITH ops AS (
  SELECT id, dur, launch_id AS launch FROM device_op
  WHERE CASE WHEN :case_id IS NOT NULL THEN case_id = :case_id
             WHEN :import_id IS NOT NULL THEN import_id = :import_id ELSE latest END
),
-- Every ancestor of every launch, carrying the op's duration along.
walk(op_dur, node) AS (
  SELECT o.dur, e.parent_id FROM ops AS o JOIN event AS e ON e.id = o.launch
  UNION ALL
  SELECT w.op_dur, p.parent_id FROM walk AS w JOIN event AS p ON p.id = w.node
),
per_range AS (
  SELECT r.id, r.name, r.category, r.dur, COUNT(*) AS ops, SUM(w.op_dur) AS op_ns
  FROM walk AS w
  JOIN event AS r ON r.id = w.node
  WHERE COALESCE(r.category, '') IN ('nvtx', 'user_annotation', 'range')
  GROUP BY r.id
)
SELECT name, category, COUNT(*) AS n, SUM(ops) AS ops, SUM(dur) / 1e3 AS range_us,
       SUM(op_ns) / 1e3 AS op_us, (SUM(dur) - SUM(op_ns)) / 1e3 AS overhead_us,
       (SUM(dur) - SUM(op_ns)) / 1e3 / COUNT(*) AS overhead_per_range_us,
       (SUM(dur) - SUM(op_ns)) * 1.0 / NULLIF(SUM(dur), 0) AS overhead_share
FROM per_range
GROUP BY name, category
ORDER BY overhead_us DESC, name;
