-- purpose: NVTX ranges (record_function ranges in PyTorch traces, llmbench's own ranges) by name: calls and time, for an imported GPU trace or a traced case
-- params: import_id = NULL (import.id; NULL: the latest import, or the latest traced case when the database holds no import); case_id = NULL (bench_case.id: read this llmbench trace instead of an import)
-- columns: name (range name), category (nvtx, user_annotation or range), domain (NVTX domain; NULL for the default domain and other sources), n (ranges), total_ms (ms, summed; nested ranges count in their parents too), avg_us (us), median_us (us), min_us (us), max_us (us), min_depth (shallowest nesting level the name occurs at)

-- Ranges are what a program annotates: NVTX push/pop and start/end ranges (nsys, category
-- nvtx), record_function / user annotations (PyTorch, user_annotation), and llmbench's own
-- prefill / decode_step / layer scopes (range), which its NVTX instrumentation also emits.
-- track_scope (a view of the schema, docs/schema.md) says which trace each track belongs to.
WITH ranges AS (
  SELECT s.name, s.category, s.dur, s.depth,
         (SELECT a.string_value FROM arg AS a
          WHERE a.arg_set_id = s.arg_set_id AND a.key = 'domain') AS domain
  FROM slice AS s
  WHERE s.track_id IN (SELECT id FROM track_scope
                       WHERE CASE WHEN :case_id IS NOT NULL THEN case_id = :case_id
                                  WHEN :import_id IS NOT NULL THEN import_id = :import_id
                                  ELSE latest END)
    AND COALESCE(s.category, '') IN ('nvtx', 'user_annotation', 'range')
)
SELECT name, category, domain, COUNT(*) AS n, SUM(dur) / 1e6 AS total_ms,
       AVG(dur) / 1e3 AS avg_us, median(dur) / 1e3 AS median_us, MIN(dur) / 1e3 AS min_us,
       MAX(dur) / 1e3 AS max_us, MIN(depth) AS min_depth
FROM ranges
GROUP BY name, category, domain
ORDER BY total_ms DESC, name;
