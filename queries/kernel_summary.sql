-- purpose: GPU kernels, memcpys and memsets (for llmbench's own traces: the kernels the CUPTI timer recorded, else its ops) by name: calls, time and share of all device time, for an imported GPU trace or a traced case
-- params: import_id = NULL (import.id; NULL: the latest import, or the latest traced case when the database holds no import); case_id = NULL (bench_case.id: read this llmbench trace instead of an import); top_n = 50 (rows listed)
-- columns: name (kernel or op), category (kernel, gpu_memcpy, gpu_memset; op category for llmbench traces), n (calls), total_ms (ms), avg_us (us), median_us (us), min_us (us), max_us (us), share (of all device time in scope, 0..1), bytes (bytes moved, memcpy and memset; analytic bytes for llmbench ops)

-- Device activity: categories kernel, gpu_memcpy and gpu_memset (nsys and Kineto; older Kineto
-- writes Kernel, Memcpy, Memset), or for an llmbench trace every op that is not a range.
-- device_op (a view of the schema, docs/schema.md): the device work of every trace, with the
-- host slice that launched it; `latest` marks the default trace.
WITH ops AS (
  SELECT name, category, dur, bytes FROM device_op
  WHERE CASE WHEN :case_id IS NOT NULL THEN case_id = :case_id
             WHEN :import_id IS NOT NULL THEN import_id = :import_id ELSE latest END
)
SELECT name, category, COUNT(*) AS n, SUM(dur) / 1e6 AS total_ms, AVG(dur) / 1e3 AS avg_us,
       median(dur) / 1e3 AS median_us, MIN(dur) / 1e3 AS min_us, MAX(dur) / 1e3 AS max_us,
       SUM(dur) * 1.0 / NULLIF((SELECT SUM(dur) FROM ops), 0) AS share, SUM(bytes) AS bytes
FROM ops
GROUP BY name, category
ORDER BY total_ms DESC, name
LIMIT :top_n;
