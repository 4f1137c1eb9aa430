-- purpose: TTFT, TPOT and E2EL against the turn of multi-turn sessions, per level of a load run: what a prefix cache buys as the history grows (a single-turn request is turn 0 of its own session)
-- params: load_run_id = NULL (load_run.id; NULL: the latest load run)
-- columns: level_id (load_level.id), level (c2 sharegpt, ...), turn_index (0-based), requests (ok requests at this turn), failed (failed requests at this turn), input_tokens_mean (the server's usage.prompt_tokens, else input_len), ttft_ms_p50 (ms), ttft_ms_p90 (ms), ttft_ms_mean (ms), tpot_ms_p50 (ms), e2el_ms_p50 (ms)

-- One row per level and turn. Later turns carry the whole history, so their prompts grow: with
-- prefix caching the server reuses the earlier turns' blocks and TTFT grows far less than the
-- prompt. docs/serving.md, "Multi-turn sessions".
WITH target AS (
  SELECT id FROM load_level
  WHERE load_run_id = COALESCE(:load_run_id, (SELECT MAX(id) FROM load_run))
)
SELECT q.level_id, l.level, COALESCE(q.turn_index, 0) AS turn_index,
       SUM(q.status = 'ok') AS requests, SUM(q.status <> 'ok') AS failed,
       AVG(CASE WHEN q.status = 'ok' THEN COALESCE(q.prompt_tokens, q.input_len) END) AS input_tokens_mean,
       median(CASE WHEN q.status = 'ok' THEN q.ttft_ns / 1e6 END) AS ttft_ms_p50,
       percentile(CASE WHEN q.status = 'ok' THEN q.ttft_ns / 1e6 END, 90) AS ttft_ms_p90,
       AVG(CASE WHEN q.status = 'ok' THEN q.ttft_ns / 1e6 END) AS ttft_ms_mean,
       median(CASE WHEN q.status = 'ok' THEN q.tpot_ns / 1e6 END) AS tpot_ms_p50,
       median(CASE WHEN q.status = 'ok' THEN q.e2el_ns / 1e6 END) AS e2el_ms_p50
FROM load_request AS q JOIN load_level AS l ON l.id = q.level_id
WHERE q.level_id IN (SELECT id FROM target)
GROUP BY q.level_id, COALESCE(q.turn_index, 0)
ORDER BY l.level_index, turn_index;
