-- purpose: histogram of inter-token latency (the gap between consecutive output chunks of a stream) per level of a load run, in fixed-width buckets
-- params: load_run_id = NULL (load_run.id; NULL: the latest load run); bucket_ms = 1.0 (bucket width, ms)
-- columns: level_id (load_level.id), level (c4 in128 out128, ...), bucket_lo_ms (bucket start, ms, inclusive), bucket_hi_ms (bucket end, ms, exclusive), gaps (ITL samples in the bucket), share (gaps / all gaps of the level), cumulative_share (share of gaps below bucket_hi_ms)

-- Only ok requests; a chunk carrying several tokens is one gap (docs/metrics.md, ITL).
WITH gaps AS (
  SELECT q.level_id, CAST(c.itl_ns / 1e6 / :bucket_ms AS INTEGER) AS b
  FROM load_chunk AS c JOIN load_request AS q ON q.id = c.request_id
  JOIN load_level AS l ON l.id = q.level_id
  WHERE l.load_run_id = COALESCE(:load_run_id, (SELECT MAX(id) FROM load_run))
    AND q.status = 'ok' AND c.itl_ns IS NOT NULL
),
hist AS (
  SELECT level_id, b, COUNT(*) AS n FROM gaps GROUP BY level_id, b
)
SELECT h.level_id, l.level, h.b * :bucket_ms AS bucket_lo_ms, (h.b + 1) * :bucket_ms AS bucket_hi_ms,
       h.n AS gaps, 1.0 * h.n / SUM(h.n) OVER (PARTITION BY h.level_id) AS share,
       1.0 * SUM(h.n) OVER (PARTITION BY h.level_id ORDER BY h.b)
         / SUM(h.n) OVER (PARTITION BY h.level_id) AS cumulative_share
FROM hist AS h JOIN load_level AS l ON l.id = h.level_id
ORDER BY l.level_index, h.b;
