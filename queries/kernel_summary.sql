-- purpose: GPU kernels, memcpys and memsets (llmbench's ops for its own traces) by name: calls, time and share of all device time, for an imported GPU trace or a traced case
-- params: import_id = NULL (import.id; NULL: the latest import, or the latest traced case when the database holds no import); case_id = NULL (bench_case.id: read this llmbench trace instead of an import); top_n = 50 (rows listed)
-- columns: name (kernel or op), category (kernel, gpu_memcpy, gpu_memset; op category for llmbench traces), n (calls), total_ms (ms), avg_us (us), median_us (us), min_us (us), max_us (us), share (of all device time in scope, 0..1), bytes (bytes moved, memcpy and memset; analytic bytes for llmbench ops)

-- Device activity: categories kernel, gpu_memcpy and gpu_memset (nsys and Kineto; older Kineto
-- writes Kernel, Memcpy, Memset), or for an llmbench trace every op that is not a range.
WITH scope AS (
  SELECT CASE WHEN :case_id IS NULL THEN COALESCE(:import_id, (SELECT MAX(id) FROM import)) END
           AS import_id,
         CASE WHEN :case_id IS NOT NULL THEN :case_id
              WHEN :import_id IS NULL AND NOT EXISTS (SELECT 1 FROM import)
                THEN (SELECT MAX(case_id) FROM track) END AS case_id
),
scope_tracks AS (
  SELECT t.id, t.case_id IS NOT NULL AS own FROM track AS t, scope
  WHERE t.import_id = scope.import_id OR t.case_id = scope.case_id
),
ops AS (
  SELECT s.name, s.category, s.dur, s.bytes
  FROM slice AS s JOIN scope_tracks AS t ON t.id = s.track_id
  WHERE (NOT t.own AND lower(COALESCE(s.category, ''))
                       IN ('kernel', 'gpu_memcpy', 'gpu_memset', 'memcpy', 'memset'))
     OR (t.own AND s.category IS NOT 'range')
)
SELECT name, category, COUNT(*) AS n, SUM(dur) / 1e6 AS total_ms, AVG(dur) / 1e3 AS avg_us,
       median(dur) / 1e3 AS median_us, MIN(dur) / 1e3 AS min_us, MAX(dur) / 1e3 AS max_us,
       SUM(dur) * 1.0 / NULLIF((SELECT SUM(dur) FROM ops), 0) AS share, SUM(bytes) AS bytes
FROM ops
GROUP BY name, category
ORDER BY total_ms DESC, name
LIMIT :top_n;
