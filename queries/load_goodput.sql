-- purpose: goodput of each level of a load run under SLO limits given here (any of TTFT, TPOT, E2EL; NULL: not checked): ok requests that meet every limit, per second and as a share of all requests
-- params: load_run_id = NULL (load_run.id; NULL: the latest load run); ttft_ms = NULL (TTFT limit, ms); tpot_ms = NULL (TPOT limit, ms; requests with one output token have no TPOT and pass); e2el_ms = NULL (E2EL limit, ms)
-- columns: level_id (load_level.id), level (c4 in128 out128, ...), requests (measured requests), ok (requests with status ok), good (ok requests meeting every limit), good_fraction (good / requests), goodput_req_s (good / duration, req/s), request_throughput (ok / duration, req/s)

-- The same rule as `llmbench load --goodput` (docs/metrics.md, "Serving metrics").
SELECT l.id AS level_id, l.level, l.requests,
       SUM(q.status = 'ok') AS ok,
       SUM(q.status = 'ok'
           AND (:ttft_ms IS NULL OR q.ttft_ns / 1e6 <= :ttft_ms)
           AND (:tpot_ms IS NULL OR q.tpot_ns IS NULL OR q.tpot_ns / 1e6 <= :tpot_ms)
           AND (:e2el_ms IS NULL OR q.e2el_ns / 1e6 <= :e2el_ms)) AS good,
       1.0 * SUM(q.status = 'ok'
                 AND (:ttft_ms IS NULL OR q.ttft_ns / 1e6 <= :ttft_ms)
                 AND (:tpot_ms IS NULL OR q.tpot_ns IS NULL OR q.tpot_ns / 1e6 <= :tpot_ms)
                 AND (:e2el_ms IS NULL OR q.e2el_ns / 1e6 <= :e2el_ms)) / l.requests
         AS good_fraction,
       SUM(q.status = 'ok'
           AND (:ttft_ms IS NULL OR q.ttft_ns / 1e6 <= :ttft_ms)
           AND (:tpot_ms IS NULL OR q.tpot_ns IS NULL OR q.tpot_ns / 1e6 <= :tpot_ms)
           AND (:e2el_ms IS NULL OR q.e2el_ns / 1e6 <= :e2el_ms)) / (l.duration_ns / 1e9)
         AS goodput_req_s,
       SUM(q.status = 'ok') / (l.duration_ns / 1e9) AS request_throughput
FROM load_level AS l JOIN load_request AS q ON q.level_id = l.id
WHERE l.load_run_id = COALESCE(:load_run_id, (SELECT MAX(id) FROM load_run))
GROUP BY l.id
ORDER BY l.level_index;
