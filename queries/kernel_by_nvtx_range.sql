-- purpose: GPU kernels (for llmbench's own traces: the kernels the CUPTI timer recorded, else its ops) attributed to the innermost NVTX / record_function range enclosing the API call that launched them, by range and kernel
-- params: import_id = NULL (import.id; NULL: the latest import, or the latest traced case when the database holds no import); case_id = NULL (bench_case.id: read this llmbench trace instead of an import)
-- columns: range_name (innermost enclosing range; '(no range)' when the launch is in none), name (kernel or op), category (kernel, gpu_memcpy, gpu_memset, or op category), n (calls), total_us (us of device time), avg_us (us), share_of_range (of the device time attributed to this range, 0..1)

-- A kernel runs on a GPU stream, outside every host range; its launch does not. The launch is
-- the host slice a flow leads from (the CUDA runtime call with the kernel's correlation id in
-- nsys imports, the ac2g flow's source in Kineto traces); for llmbench's own traces the op that
-- launched the kernel (its parent event), or the op itself where no kernels were recorded. From there the walk goes up the parents to the first range.
-- device_op (a view of the schema, docs/schema.md): the device work of every trace, with the
-- host slice that launched it; `latest` marks the default trace.
WITH ops AS (
  SELECT id, name, category, dur, launch_id AS launch FROM device_op
  WHERE CASE WHEN :case_id IS NOT NULL THEN case_id = :case_id
             WHEN :import_id IS NOT NULL THEN import_id = :import_id ELSE latest END
),
-- Ancestors of each launch, innermost first, carrying the op along; a walk ends at the first
-- range or at the root (node NULL), so every op has exactly one last row.
walk(op_id, name, category, dur, node) AS (
  SELECT o.id, o.name, o.category, o.dur, e.parent_id
  FROM ops AS o LEFT JOIN event AS e ON e.id = o.launch
  UNION ALL
  SELECT w.op_id, w.name, w.category, w.dur, p.parent_id
  FROM walk AS w JOIN event AS p ON p.id = w.node
  WHERE COALESCE(p.category, '') NOT IN ('nvtx', 'user_annotation', 'range')
),
grouped AS (
  SELECT COALESCE(r.name, '(no range)') AS range_name, w.name, w.category, COUNT(*) AS n,
         SUM(w.dur) AS total, AVG(w.dur) AS avg_dur
  FROM walk AS w LEFT JOIN event AS r ON r.id = w.node
  WHERE w.node IS NULL OR COALESCE(r.category, '') IN ('nvtx', 'user_annotation', 'range')
  GROUP BY 1, w.name, w.category
)
SELECT range_name, name, category, n, total / 1e3 AS total_us, avg_dur / 1e3 AS avg_us,
       total * 1.0 / SUM(total) OVER (PARTITION BY range_name) AS share_of_range
FROM grouped
ORDER BY range_name, total_us DESC, name;
