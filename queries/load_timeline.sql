-- purpose: per-request timeline of one level of a load run: when each request was due, sent, got its first byte and first token, and ended (ms since the level's origin), with its outcome
-- params: level_id = NULL (load_level.id; NULL: the first level of the latest load run)
-- columns: level_id (load_level.id), request_index (0-based, in start order), status (ok|error), scheduled_ms (rate levels: drawn arrival, ms), send_ms (ms), first_byte_ms (ms), first_token_ms (ms), end_ms (ms), ttft_ms (ms), e2el_ms (ms), output_tokens (tokens), chunks (output chunks), http_status (NULL: no response), error (why it failed)

WITH target AS (
  SELECT COALESCE(:level_id,
                  (SELECT id FROM load_level
                   WHERE load_run_id = (SELECT MAX(id) FROM load_run)
                   ORDER BY level_index LIMIT 1)) AS id
)
SELECT q.level_id, q.request_index, q.status, q.scheduled_ns / 1e6 AS scheduled_ms,
       q.send_ns / 1e6 AS send_ms, q.first_byte_ns / 1e6 AS first_byte_ms,
       q.first_token_ns / 1e6 AS first_token_ms, q.end_ns / 1e6 AS end_ms,
       q.ttft_ns / 1e6 AS ttft_ms, q.e2el_ns / 1e6 AS e2el_ms, q.output_tokens, q.chunks,
       q.http_status, q.error
FROM load_request AS q
WHERE q.level_id = (SELECT id FROM target)
ORDER BY q.request_index;
