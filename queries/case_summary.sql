-- purpose: headline metrics of every case in a run: TTFT, TPOT, throughput, MBU, MFU and the tracing overhead
-- params: run_id = NULL (run.id; NULL: the latest run)
-- columns: case_id (bench_case.id), run_id (run.id; shards of one sweep are different runs), model (preset or model directory), dtype (weight type), backend (cpu|cuda), batch (sequences), prompt_len (tokens), max_new_tokens (tokens per sequence), variants (engine variants: default, or the non-default ones as qkv=permute kv_cache=paged/16; variants_label of bench_case.variants), status (ok|error), n (measured repetitions), ttft_ms_p50 (median time to first token, ms), tpot_ms_mean (mean time per output token, ms; NULL with one new token), tpot_ms_p99 (ms), e2e_ms_p50 (median end-to-end latency, ms), throughput_tok_s (generated tokens/s), prefill_tok_s (prompt tokens/s), mbu (decode bandwidth utilisation, 0..1), mfu (prefill FLOP utilisation, 0..1), trace (off|steps|ops), trace_overhead_ttft (traced / untraced TTFT), trace_overhead_tpot (traced / untraced TPOT)

-- Headline numbers come from the untraced repetitions; the trace_overhead columns say how much
-- the traced repetition was slowed down by its instrumentation.
WITH target AS (  -- the run (default: the latest run) and the other shards of its sweep
  SELECT r.id AS run_id FROM run AS r
  WHERE COALESCE(r.run_group, r.id) = (
    SELECT COALESCE(g.run_group, g.id) FROM run AS g
    WHERE g.id = COALESCE(:run_id, (SELECT MAX(id) FROM run)))
)
SELECT c.id AS case_id, c.run_id, c.model, c.dtype, c.backend, c.batch, c.prompt_len,
       c.max_new_tokens, variants_label(c.variants) AS variants, c.status,
       (SELECT COUNT(*) FROM bench_sample AS m WHERE m.case_id = c.id) AS n, c.ttft_ms_p50,
       c.tpot_ms_mean, c.tpot_ms_p99, c.e2e_ms_p50,
       c.throughput_tok_s, c.prefill_tok_s, c.mbu, c.mfu, c.trace, c.trace_overhead_ttft,
       c.trace_overhead_tpot
FROM bench_case AS c
JOIN target ON c.run_id = target.run_id
ORDER BY c.case_index, c.id;
