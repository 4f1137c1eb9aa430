-- purpose: the requests of a `serve --db X --trace steps|ops` session whose time to first token went to other requests' prompts: over each request's window from arrival to first token, the engine time spent on other requests' prefill chunks (each step's time shared by rows) against the time spent on its own prompt, and who those others were; a request is blocked when the others' share is the larger
-- params: session_id = NULL (serve_session.id; NULL: the latest session); min_blocked_ms = 0 (only requests with more others' prefill time than this, ms)
-- columns: request_id (serve_request.request_id), x_request_id (the X-Request-Id it was served under), ttft_ms (arrival to the end of the step that gave its first token, ms), queue_ms (arrival to its first step, ms), steps_in_window (engine steps overlapping its window), own_prefill_ms (its own prompt rows' share of its prefill steps, ms), others_prefill_ms (other requests' prompt rows' share of the steps in its window, ms, each step counted for the part inside the window), others_prefill_share (others_prefill_ms / ttft_ms), blocked (1: others_prefill_ms > own_prefill_ms), blockers (the other requests with prompt rows in the window, by prompt rows: serve_request.request_id:rows, at most 5)

-- A step's time is shared by its rows (prompt chunk rows and decode rows alike): a step of
-- 512 prompt rows of request 3 and 4 decode rows gives 512/516 of its time to request 3.
WITH target AS (
  SELECT COALESCE(:session_id, (SELECT MAX(id) FROM serve_session)) AS session_id
),
req AS (
  SELECT r.* FROM serve_request AS r JOIN target ON r.session_id = target.session_id
  WHERE r.first_token_ns IS NOT NULL AND r.arrival_ns IS NOT NULL
),
step AS (
  SELECT s.step, s.start_ns, s.dur_ns, s.prefill_tokens + s.decode_rows AS rows
  FROM serve_step AS s JOIN target ON s.session_id = target.session_id
  WHERE s.prefill_tokens + s.decode_rows > 0
),
member AS (
  SELECT m.step, m.request_id, m.role, m.tokens
  FROM serve_step_request AS m JOIN target ON m.session_id = target.session_id
),
win AS (  -- each request's steps overlapping [arrival, first token], with the overlap
  SELECT r.request_id, s.step, s.dur_ns, s.rows,
         MIN(s.start_ns + s.dur_ns, r.first_token_ns) - MAX(s.start_ns, r.arrival_ns) AS overlap_ns
  FROM req AS r JOIN step AS s
    ON s.start_ns < r.first_token_ns AND s.start_ns + s.dur_ns > r.arrival_ns
),
others AS (
  SELECT w.request_id, m.request_id AS other_id, SUM(m.tokens) AS tokens,
         SUM(CAST(w.overlap_ns AS REAL) * m.tokens / w.rows) AS ns
  FROM win AS w JOIN member AS m ON m.step = w.step AND m.role = 'prefill'
                                    AND m.request_id <> w.request_id
  GROUP BY w.request_id, m.request_id
),
own AS (
  SELECT m.request_id, SUM(CAST(s.dur_ns AS REAL) * m.tokens / s.rows) AS ns
  FROM member AS m JOIN step AS s ON s.step = m.step
  WHERE m.role = 'prefill'
  GROUP BY m.request_id
),
ranked AS (
  SELECT request_id, other_id, tokens,
         ROW_NUMBER() OVER (PARTITION BY request_id ORDER BY tokens DESC, other_id) AS rk
  FROM others
),
summary AS (
  SELECT r.request_id, r.x_request_id,
         (r.first_token_ns - r.arrival_ns) / 1e6 AS ttft_ms,
         (r.first_scheduled_ns - r.arrival_ns) / 1e6 AS queue_ms,
         (SELECT COUNT(*) FROM win AS w WHERE w.request_id = r.request_id) AS steps_in_window,
         COALESCE((SELECT ns FROM own WHERE own.request_id = r.request_id), 0) / 1e6
           AS own_prefill_ms,
         COALESCE((SELECT SUM(ns) FROM others AS o WHERE o.request_id = r.request_id), 0) / 1e6
           AS others_prefill_ms,
         (SELECT group_concat(other_id || ':' || tokens, ' ') FROM
            (SELECT other_id, tokens FROM ranked AS k WHERE k.request_id = r.request_id
             AND k.rk <= 5 ORDER BY k.rk)) AS blockers
  FROM req AS r
  WHERE EXISTS (SELECT 1 FROM member WHERE member.request_id = r.request_id)
)
SELECT request_id, x_request_id, ttft_ms, queue_ms, steps_in_window, own_prefill_ms,
       others_prefill_ms,
       CASE WHEN ttft_ms > 0 THEN others_prefill_ms / ttft_ms END AS others_prefill_share,
       CASE WHEN others_prefill_ms > own_prefill_ms THEN 1 ELSE 0 END AS blocked, blockers
FROM summary
WHERE others_prefill_ms > :min_blocked_ms
ORDER BY others_prefill_ms DESC, request_id;
