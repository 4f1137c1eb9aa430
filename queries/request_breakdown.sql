-- purpose: one served request's path through the engine, from a `serve --db X --trace steps|ops` database: its wait in the queue, then every engine step it had rows in (its prompt chunks, its decode steps), the other requests in each step and where each step's time went by op category (with --trace ops), so a slow request is read down to the op
-- params: session_id = NULL (serve_session.id; NULL: the latest session); x_request_id = NULL (the X-Request-Id to show, as load stored it in load_request.x_request_id; NULL: every request of the session); request_id = NULL (serve_request.request_id, the server's own number; NULL: every request)
-- columns: request_id (serve_request.request_id), x_request_id (the X-Request-Id it was served under), role (queue: arrival to its first step | prefill: a step with a chunk of its prompt | decode: a step with one decode row of it), step (serve_step.step; NULL for queue), start_ms (ms since the request's arrival), dur_ms (the whole step, ms; queue: the wait), tokens (its rows in the step), step_rows (every row of the step), other_requests (requests sharing the step), other_prefill_tokens (their prompt rows in the step), others (the other requests' serve_request.request_id, with p for a prompt chunk or d for a decode row), gemm_ms (ms, the step's ops by category; NULL without --trace ops), attention_ms (ms), norm_ms (ms), elementwise_ms (ms), copy_ms (ms), transfer_ms (ms), sample_ms (ms), outside_ops_ms (dur_ms less the ops: scheduling, bookkeeping and the tracer's own cost), top_op (the op name with most time in the step), top_op_ms (ms)

-- Joins serve_request -> serve_step_request (who was in each step) -> serve_step (its time)
-- -> event on the session's trace track (event.step = serve_step.step). docs/serving.md,
-- "Tracing a server", has a worked example.
WITH target AS (
  SELECT COALESCE(:session_id, (SELECT MAX(id) FROM serve_session)) AS session_id
),
sess AS (
  SELECT ss.id AS session_id, ss.track_id FROM serve_session AS ss JOIN target ON ss.id = target.session_id
),
req AS (
  SELECT r.* FROM serve_request AS r JOIN target ON r.session_id = target.session_id
  WHERE (:x_request_id IS NULL OR r.x_request_id = :x_request_id)
    AND (:request_id IS NULL OR r.request_id = :request_id)
),
member AS (
  SELECT m.step, m.request_id, m.role, m.tokens
  FROM serve_step_request AS m JOIN target ON m.session_id = target.session_id
),
ops AS (
  SELECT e.step, e.name, e.category, e.dur
  FROM event AS e JOIN sess ON e.track_id = sess.track_id
  WHERE e.category IS NOT 'range'
),
by_category AS (
  SELECT step,
         SUM(dur) AS ops_ns,
         SUM(CASE WHEN category = 'gemm' THEN dur ELSE 0 END) AS gemm_ns,
         SUM(CASE WHEN category = 'attention' THEN dur ELSE 0 END) AS attention_ns,
         SUM(CASE WHEN category = 'norm' THEN dur ELSE 0 END) AS norm_ns,
         SUM(CASE WHEN category = 'elementwise' THEN dur ELSE 0 END) AS elementwise_ns,
         SUM(CASE WHEN category = 'copy' THEN dur ELSE 0 END) AS copy_ns,
         SUM(CASE WHEN category = 'transfer' THEN dur ELSE 0 END) AS transfer_ns,
         SUM(CASE WHEN category = 'sample' THEN dur ELSE 0 END) AS sample_ns
  FROM ops GROUP BY step
),
top AS (
  SELECT step, name, ns FROM (
    SELECT step, name, SUM(dur) AS ns,
           ROW_NUMBER() OVER (PARTITION BY step ORDER BY SUM(dur) DESC, name) AS rk
    FROM ops GROUP BY step, name)
  WHERE rk = 1
),
shared AS (
  SELECT a.request_id, a.step,
         COUNT(b.request_id) AS other_requests,
         COALESCE(SUM(CASE WHEN b.role = 'prefill' THEN b.tokens END), 0) AS other_prefill_tokens,
         group_concat(b.request_id || CASE WHEN b.role = 'prefill' THEN 'p' ELSE 'd' END, ' ')
           AS others
  FROM member AS a JOIN req ON req.request_id = a.request_id
  LEFT JOIN member AS b ON b.step = a.step AND b.request_id <> a.request_id
  GROUP BY a.request_id, a.step
)
SELECT request_id, x_request_id, 'queue' AS role, NULL AS step, 0.0 AS start_ms,
       (first_scheduled_ns - arrival_ns) / 1e6 AS dur_ms, NULL AS tokens, NULL AS step_rows,
       NULL AS other_requests, NULL AS other_prefill_tokens, NULL AS others,
       NULL AS gemm_ms, NULL AS attention_ms, NULL AS norm_ms, NULL AS elementwise_ms,
       NULL AS copy_ms, NULL AS transfer_ms, NULL AS sample_ms, NULL AS outside_ops_ms,
       NULL AS top_op, NULL AS top_op_ms
FROM req
WHERE first_scheduled_ns IS NOT NULL
  AND EXISTS (SELECT 1 FROM member WHERE member.request_id = req.request_id)
UNION ALL
SELECT r.request_id, r.x_request_id, m.role, m.step, (s.start_ns - r.arrival_ns) / 1e6,
       s.dur_ns / 1e6, m.tokens, s.prefill_tokens + s.decode_rows,
       sh.other_requests, sh.other_prefill_tokens, sh.others,
       c.gemm_ns / 1e6, c.attention_ns / 1e6, c.norm_ns / 1e6, c.elementwise_ns / 1e6,
       c.copy_ns / 1e6, c.transfer_ns / 1e6, c.sample_ns / 1e6,
       CASE WHEN c.ops_ns IS NULL THEN NULL ELSE (s.dur_ns - c.ops_ns) / 1e6 END,
       t.name, t.ns / 1e6
FROM req AS r
JOIN member AS m ON m.request_id = r.request_id
JOIN serve_step AS s ON s.session_id = r.session_id AND s.step = m.step
JOIN shared AS sh ON sh.request_id = r.request_id AND sh.step = m.step
LEFT JOIN by_category AS c ON c.step = m.step
LEFT JOIN top AS t ON t.step = m.step
ORDER BY 1, 5, 4;
