-- purpose: explain serving latency spikes: for the requests of a `serve --db` session with the highest TTFT, every engine step between the request's arrival and its first token, with what the engine was doing in it (prompt rows, decode rows, queues, KV blocks, step and forward time)
-- params: session_id = NULL (serve_session.id; NULL: the latest session); top_n = 3 (slowest requests listed)
-- columns: rank (1: the highest TTFT), request_id (serve_request.request_id), ttft_ms (arrival to first token, ms), queued_ms (arrival to its first scheduled step, ms), prompt_tokens (tokens the engine ran), step (serve_step.step), at_ms (the step's start after the request's arrival, ms; negative: the step was running when it arrived), step_ms (the whole step, ms), forward_ms (its forward pass, ms), host_ms (scheduling and bookkeeping: step - forward, ms), prefill_tokens (prompt rows in the step, all requests), decode_rows (decode rows in the step), seqs (sequences with rows), running (requests holding blocks after the step), waiting (requests queued after the step), kv_blocks_used (after the step), scheduled (1: the step started at or after the request's first scheduled step, so it ran the request's rows; 0: the request was still queued)

-- The steps listed for a request are those that overlap [arrival, first token]: a request that
-- waited behind long prefill steps shows large prefill_tokens and step_ms with scheduled = 0
-- (queued) or 1 (its own prompt shared the step); one that waited for KV blocks shows
-- waiting > 0 with kv_blocks_used near serve_session.kv_blocks. Times are ns since the
-- server's origin in the tables (docs/schema.md, "Serving tables").
WITH target AS (
  SELECT COALESCE(:session_id, (SELECT MAX(id) FROM serve_session)) AS session_id
),
slowest AS (
  SELECT r.session_id, r.request_id, r.prompt_tokens, r.arrival_ns, r.first_scheduled_ns,
         r.first_token_ns,
         ROW_NUMBER() OVER (ORDER BY r.first_token_ns - r.arrival_ns DESC, r.request_id)
           AS rank
  FROM serve_request AS r JOIN target ON r.session_id = target.session_id
  WHERE r.first_token_ns IS NOT NULL AND r.arrival_ns IS NOT NULL
)
SELECT q.rank, q.request_id,
       (q.first_token_ns - q.arrival_ns) / 1e6 AS ttft_ms,
       (q.first_scheduled_ns - q.arrival_ns) / 1e6 AS queued_ms,
       q.prompt_tokens,
       s.step,
       (s.start_ns - q.arrival_ns) / 1e6 AS at_ms,
       s.dur_ns / 1e6 AS step_ms,
       s.forward_ns / 1e6 AS forward_ms,
       (s.dur_ns - s.forward_ns) / 1e6 AS host_ms,
       s.prefill_tokens, s.decode_rows, s.seqs, s.running, s.waiting, s.kv_blocks_used,
       CASE WHEN s.start_ns >= q.first_scheduled_ns THEN 1 ELSE 0 END AS scheduled
FROM slowest AS q
JOIN serve_step AS s
  ON s.session_id = q.session_id
 AND s.start_ns < q.first_token_ns
 AND s.start_ns + s.dur_ns > q.arrival_ns
WHERE q.rank <= :top_n
ORDER BY q.rank, s.step;
