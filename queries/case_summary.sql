-- purpose: headline metrics of every case in a run: TTFT, TPOT, throughput, MBU, MFU and the tracing overhead
-- params: run_id = NULL (run.id; NULL: the latest run)
-- columns: case_id (bench_case.id), model (preset or model directory), dtype (weight type), backend (cpu|cuda), batch (sequences), prompt_len (tokens), max_new_tokens (tokens per sequence), status (ok|error), ttft_ms (median time to first token, ms), tpot_ms (mean time per output token, ms; NULL with one new token), tpot_ms_p99 (ms), e2e_ms (median end-to-end latency, ms), throughput_tok_s (generated tokens/s), prefill_tok_s (prompt tokens/s), mbu (decode bandwidth utilisation, 0..1), mfu (prefill FLOP utilisation, 0..1), trace (off|steps|ops), trace_overhead_ttft (traced / untraced TTFT), trace_overhead_tpot (traced / untraced TPOT)

-- Headline numbers come from the untraced repetitions; the trace_overhead columns say how much
-- the traced repetition was slowed down by its instrumentation.
WITH target AS (
  SELECT COALESCE(:run_id, (SELECT MAX(id) FROM run)) AS run_id
)
SELECT c.id AS case_id, c.model, c.dtype, c.backend, c.batch, c.prompt_len, c.max_new_tokens,
       c.status, c.ttft_ms, c.tpot_ms_mean AS tpot_ms, c.tpot_ms_p99, c.e2e_ms,
       c.throughput_tok_s, c.prefill_tok_s, c.mbu, c.mfu, c.trace, c.trace_overhead_ttft,
       c.trace_overhead_tpot
FROM bench_case AS c
JOIN target ON c.run_id = target.run_id
ORDER BY c.id;
