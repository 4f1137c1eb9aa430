// Flag validation and case expansion (see run_plan.h).
#include "tools/run/run_plan.h"

#include <omp.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/backend_factory.h"
#include "kernels/common/error.h"
#include "engine/hf_checkpoint.h"
#include "tools/run/flag_values.h"
#include "tools/store/case_key.h"
#include "tools/report/printers.h"

namespace llmbench {

namespace fs = std::filesystem;

ModelConfig resolve_model(const std::string& name) {
  if (const ModelConfig* p = find_preset(name)) return *p;
  std::string presets;
  for (const auto& p : model_presets()) presets += (presets.empty() ? "" : ", ") + p.name;
  std::error_code ec;
  if (fs::is_directory(name, ec)) {
    if (!looks_like_hf_checkpoint(name))
      throw BadInput("--model: directory '" + name + "' has no config.json (expected a Hugging "
                     "Face checkpoint directory or a preset: " + presets + ")");
    try {
      return read_hf_config(name);
    } catch (const BadInput& e) {
      throw BadInput(std::string("--model: ") + e.what());
    }
  }
  if (name.find('/') != std::string::npos || fs::exists(name, ec))
    throw BadInput("--model: '" + name + "' is not a preset and not an existing directory "
                   "(presets: " + presets + ")");
  throw BadInput("--model: no preset named '" + name + "' (presets: " + presets + ")");
}

namespace {

void check_db_path(const std::string& db) {
  if (db.empty()) throw BadInput("--db: expected a file path, got ''");
  const fs::path p(db);
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw BadInput("--db: '" + db + "' is a directory, expected a file");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw BadInput("--db: directory '" + dir.string() + "' does not exist");
}

}  // namespace

namespace {

// "--prompt-ids 1,2,3" or "--prompt-ids @FILE" (ids separated by commas or whitespace).
std::vector<std::int32_t> read_prompt_ids(const std::string& value) {
  if (value.empty()) return {};
  std::string text = value;
  if (value[0] == '@') {
    std::ifstream in(value.substr(1));
    if (!in) throw BadInput("--prompt-ids: cannot read file '" + value.substr(1) + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  for (char& ch : text)
    if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') ch = ',';
  // Collapse separators so "1, 2\n3" reads as 1,2,3; an empty list is still an error.
  std::string compact;
  for (char ch : text)
    if (ch != ',' || (!compact.empty() && compact.back() != ',')) compact += ch;
  while (!compact.empty() && compact.back() == ',') compact.pop_back();
  if (compact.empty()) throw BadInput("--prompt-ids: expected at least one token id");
  std::vector<std::int32_t> ids;
  for (int id : parse_int_list("--prompt-ids", compact, 0, INT_MAX)) ids.push_back(id);
  return ids;
}

// Parses a list flag of names: each item through `parse`, else one error naming the flag and
// the accepted values.
template <class T, class Parse>
std::vector<T> parse_choice_list(const std::string& flag, const std::string& text,
                                 const char* accepted, Parse parse) {
  std::vector<T> out;
  for (const auto& item : parse_word_list(flag, text)) {
    const std::optional<T> v = parse(item);
    if (!v) throw BadInput(flag + ": expected " + accepted + ", got '" + item + "'");
    out.push_back(*v);
  }
  return out;
}

// --qkv x --kv-cache x --logits x --timer, in that nesting order.
std::vector<Variants> parse_variants(const RunOptions& o) {
  const auto qkvs = parse_choice_list<QkvLayout>("--qkv", o.qkv, "fused or permute",
                                                 parse_qkv_layout);
  const auto kvs = parse_choice_list<KvCacheKind>(
      "--kv-cache", o.kv_cache, "prealloc, concat, paged or paged-gather", parse_kv_cache_kind);
  const auto logits = parse_choice_list<LogitsMode>("--logits", o.logits, "device, last or all",
                                                    parse_logits_mode);
  const auto timers = parse_choice_list<TimerMode>("--timer", o.timer, "device or host-nosync",
                                                   parse_timer_mode);
  const int block = parse_int("--kv-cache-block", o.kv_cache_block, 1, 1 << 16);
  std::vector<Variants> out;
  if (!o.variant_sets.empty()) {
    // Named bundles: the fast paths, or every naive variant at once (the case study's pair).
    if (o.qkv != "fused" || o.kv_cache != "prealloc" || o.logits != "device")
      throw BadInput("--variants: cannot be combined with --qkv, --kv-cache or --logits (it "
                     "sets all three)");
    for (const auto& name : parse_word_list("--variants", o.variant_sets)) {
      Variants v;
      if (name == "naive") {
        v.qkv = QkvLayout::kPermute;
        v.kv_cache = KvCacheKind::kConcat;
        v.logits = LogitsMode::kAll;
      } else if (name != "fast") {
        throw BadInput("--variants: expected fast or naive, got '" + name + "'");
      }
      v.kv_cache_block = block;
      for (TimerMode t : timers) {
        v.timer = t;
        out.push_back(v);
      }
    }
    return out;
  }
  for (QkvLayout q : qkvs)
    for (KvCacheKind kv : kvs)
      for (LogitsMode lg : logits)
        for (TimerMode t : timers) {
          Variants v;
          v.qkv = q;
          v.kv_cache = kv;
          v.kv_cache_block = block;
          v.logits = lg;
          v.timer = t;
          out.push_back(v);
        }
  return out;
}

}  // namespace

namespace {

// "--shard K/N" -> {K, N}, 1 <= K <= N.
std::pair<int, int> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos)
    throw BadInput("--shard: expected K/N (e.g. 2/4), got '" + text + "'");
  const int n = parse_int("--shard", text.substr(slash + 1), 1, 1 << 20);
  const int k = parse_int("--shard", text.substr(0, slash), 1, n);
  return {k, n};
}

}  // namespace

RunPlan make_plan(const RunOptions& o) {
  RunPlan plan;
  std::pair<int, int> shard{1, 1};
  if (!o.shard.empty()) {
    shard = parse_shard(o.shard);
    plan.shard = o.shard;
  }
  if (o.slo_ttft_p99_ms && !(*o.slo_ttft_p99_ms > 0))
    throw BadInput("--slo-ttft-p99-ms: expected a positive number of milliseconds");
  if (o.slo_tpot_p99_ms && !(*o.slo_tpot_p99_ms > 0))
    throw BadInput("--slo-tpot-p99-ms: expected a positive number of milliseconds");
  // ---- scalar flags ----
  const BackendChoice choice = choose_backend(o.backend);
  plan.backend = choice.name;
  plan.backend_notice = choice.notice;
  const auto dtypes = parse_word_list("--dtype", o.dtype);
  std::vector<DType> dts;
  for (const auto& d : dtypes) {
    auto t = parse_dtype(d);
    if (!t) throw BadInput("--dtype: expected fp32, fp16 or bf16, got '" + d + "'");
    dts.push_back(*t);
  }
  const int warmup = parse_int("--warmup", o.warmup, 0, 1000000);
  const int repeat = parse_int("--repeat", o.repeat, 1, 1000000);
  const int threads_flag = o.threads.empty() ? 0 : parse_int("--threads", o.threads, 1, 4096);
  plan.threads = threads_flag > 0 ? threads_flag : omp_get_max_threads();
  const auto seed = std::uint64_t(parse_int("--seed", o.seed, 0, INT_MAX));
  if (!is_output_format(o.format) && o.format != "jsonl")
    throw BadInput("--format: expected table, md, csv, json or jsonl, got '" + o.format + "'");
  if (o.peak_bw_gbps && !(*o.peak_bw_gbps > 0))
    throw BadInput("--peak-bw-gbps: expected a positive number");
  if (o.peak_tflops && !(*o.peak_tflops > 0))
    throw BadInput("--peak-tflops: expected a positive number");
  check_db_path(o.db);
  const auto trace = parse_trace_level(o.trace);
  if (!trace) throw BadInput("--trace: expected off, steps or ops, got '" + o.trace + "'");

  // ---- list flags ----
  const auto models = parse_word_list("--model", o.model);
  const auto batches = parse_int_list("--batch", o.batch, 1, 1 << 20);
  const std::vector<std::int32_t> prompt_ids = read_prompt_ids(o.prompt_ids);
  auto prompts = parse_int_list("--prompt-len", o.prompt_len, 1, 1 << 24);
  if (!prompt_ids.empty()) {
    if (o.prompt_len_given && (prompts.size() != 1 || prompts[0] != int(prompt_ids.size())))
      throw BadInput("--prompt-len: conflicts with the " + std::to_string(prompt_ids.size()) +
                     " ids of --prompt-ids (leave --prompt-len out)");
    if (o.distinct_prompts)
      throw BadInput("--distinct-prompts: cannot be combined with --prompt-ids");
    prompts = {int(prompt_ids.size())};
  }
  const auto gens = parse_int_list("--max-new-tokens", o.max_new_tokens, 1, 1 << 24);
  const std::vector<Variants> variants = parse_variants(o);

  for (const auto& name : models) {
    const ModelConfig c = resolve_model(name);
    if (!find_preset(name)) {
      // Validate the checkpoint's tensors now (header, shapes, offsets: no data is read), so a
      // broken checkpoint is bad input (exit 2) and nothing runs.
      try {
        CheckpointWeights validate(name, c);
      } catch (const BadInput& e) {
        throw BadInput(std::string("--model: ") + e.what());
      }
    }
    for (auto id : prompt_ids)
      if (id >= c.vocab_size)
        throw BadInput("--prompt-ids: token id " + std::to_string(id) + " is outside the vocabulary of '" +
                       name + "' [0, " + std::to_string(c.vocab_size) + ")");
    for (int p : prompts)
      for (int g : gens)
        if (p + g > c.max_seq_len)
          throw BadInput("--prompt-len/--max-new-tokens: prompt " + std::to_string(p) + " + " +
                         std::to_string(g) + " new tokens exceeds the context length of '" +
                         name + "' (" + std::to_string(c.max_seq_len) + ")");
    for (DType dt : dts)
      for (const Variants& v : variants)
        for (int b : batches)
          for (int p : prompts)
            for (int g : gens) {
              CaseSpec s;
              s.model = name;
              s.backend = plan.backend;
              s.dtype = dt;
              s.batch = b;
              s.prompt_len = p;
              s.max_new_tokens = g;
              s.warmup = warmup;
              s.repeat = repeat;
              s.threads = plan.threads;
              s.seed = seed;
              s.distinct_prompts = o.distinct_prompts;
              s.trace = *trace;
              s.prompt = prompt_ids;
              s.profile_range = o.profile_range;
              s.variants = v;
              plan.cases.push_back(s);
            }
  }
  std::vector<std::string> all_keys;
  for (const CaseSpec& s : plan.cases) all_keys.push_back(case_key(s));
  plan.sweep_key = plan_key(all_keys, "");
  // Sharding: a deterministic 1/N of the plan, by index, so N shards cover it exactly once.
  std::vector<CaseSpec> mine;
  for (std::size_t i = 0; i < plan.cases.size(); ++i)
    if (int(i % std::size_t(shard.second)) == shard.first - 1) {
      mine.push_back(plan.cases[i]);
      plan.case_index.push_back(int(i));
    }
  plan.cases = std::move(mine);
  return plan;
}

}  // namespace llmbench
