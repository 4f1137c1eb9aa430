// Flag validation and case expansion (see run_plan.h).
#include "tools/run/run_plan.h"

#include <omp.h>

#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/model/backend_factory.h"
#include "engine/checkpoint/input_file.h"
#include "kernels/common/error.h"
#include "engine/checkpoint/hf_checkpoint.h"
#include "tools/console/flag_values.h"
#include "tools/store/case_key.h"
#include "tools/store/variants_json.h"
#include "tools/console/printers.h"

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
  refuse_special_file(db, "--db");  // a FIFO would block the first read forever
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
    refuse_special_file(value.substr(1), "--prompt-ids: file");
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

// A list flag that names one value twice would run the same cases twice and store them as if
// they were different measurements: refused, naming the value (as parsed: "4,04" repeats 4).
std::vector<int> parse_unique_int_list(const std::string& flag, const std::string& text, int min,
                                       int max) {
  auto out = parse_int_list(flag, text, min, max);
  // Sorted copy: long lists stay O(n log n).
  auto sorted = out;
  std::sort(sorted.begin(), sorted.end());
  const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end())
    throw BadInput(flag + ": " + std::to_string(*dup) + " is listed twice (each value runs once; "
                   "remove the repeat)");
  return out;
}

std::vector<std::string> parse_unique_word_list(const std::string& flag, const std::string& text) {
  auto out = parse_word_list(flag, text);
  auto sorted = out;
  std::sort(sorted.begin(), sorted.end());
  const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end())
    throw BadInput(flag + ": '" + *dup + "' is listed twice (each value runs once; remove the "
                   "repeat)");
  return out;
}

// Parses a list flag of names: each item through `parse`, else one error naming the flag and
// the accepted values.
template <class T, class Parse>
std::vector<T> parse_choice_list(const std::string& flag, const std::string& text,
                                 const char* accepted, Parse parse) {
  std::vector<T> out;
  std::vector<std::string> items;
  for (const auto& item : parse_word_list(flag, text)) {
    const std::optional<T> v = parse(item);
    if (!v) throw BadInput(flag + ": expected " + accepted + ", got '" + item + "'");
    out.push_back(*v);
    items.push_back(item);
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (out[j] == out[i])
        throw BadInput(flag + ": '" + items[i] + "' is listed twice (each value runs once; "
                       "remove the repeat)");
  return out;
}

// "off"/"on" for --cuda-graphs.
std::optional<bool> parse_on_off(std::string_view s) {
  if (s == "off") return false;
  if (s == "on") return true;
  return std::nullopt;
}

// --qkv x --kv-cache x --logits x --timer x --cuda-graphs, in that nesting order.
std::vector<Variants> parse_variants(const RunOptions& o) {
  const auto qkvs = parse_choice_list<QkvLayout>("--qkv", o.qkv, "fused or permute",
                                                 parse_qkv_layout);
  const auto kvs = parse_choice_list<KvCacheKind>(
      "--kv-cache", o.kv_cache, "prealloc, concat, paged or paged-gather", parse_kv_cache_kind);
  const auto logits = parse_choice_list<LogitsMode>("--logits", o.logits, "device, last or all",
                                                    parse_logits_mode);
  const auto timers = parse_choice_list<TimerMode>("--timer", o.timer, "device, cupti, events or host-nosync",
                                                   parse_timer_mode);
  const auto graphs = parse_choice_list<bool>("--cuda-graphs", o.cuda_graphs, "off or on",
                                              parse_on_off);
  const int block = parse_int("--kv-cache-block", o.kv_cache_block, 1, 1 << 16);
  std::vector<Variants> out;
  if (!o.variant_sets.empty()) {
    // Named bundles: the fast paths, or every naive variant at once (the case study's pair).
    // Given at all (even with its default value, `--variants naive --qkv fused`), one of the
    // three flags would be silently overridden.
    for (const char* flag : {"qkv", "kv-cache", "logits"})
      if (o.given.count(flag))
        throw BadInput(std::string("--variants: cannot be combined with --") + flag +
                       " (it sets --qkv, --kv-cache and --logits)");
    if (o.qkv != "fused" || o.kv_cache != "prealloc" || o.logits != "device")
      throw BadInput("--variants: cannot be combined with --qkv, --kv-cache or --logits (it "
                     "sets all three)");
    for (const auto& name : parse_unique_word_list("--variants", o.variant_sets)) {
      Variants v;
      if (name == "naive") {
        v.qkv = QkvLayout::kPermute;
        v.kv_cache = KvCacheKind::kConcat;
        v.logits = LogitsMode::kAll;
      } else if (name != "fast") {
        throw BadInput("--variants: expected fast or naive, got '" + name + "'");
      }
      v.kv_cache_block = block;
      for (TimerMode t : timers)
        for (bool g : graphs) {
          v.timer = t;
          v.cuda_graphs = g;
          out.push_back(v);
        }
    }
    return out;
  }
  for (QkvLayout q : qkvs)
    for (KvCacheKind kv : kvs)
      for (LogitsMode lg : logits)
        for (TimerMode t : timers)
          for (bool g : graphs) {
            Variants v;
            v.qkv = q;
            v.kv_cache = kv;
            v.kv_cache_block = block;
            v.logits = lg;
            v.timer = t;
            v.cuda_graphs = g;
            out.push_back(v);
          }
  return out;
}

}  // namespace

namespace {

// A standard deviation flag: a finite number >= 0 (and at most 1e9 tokens).
double parse_stddev(const std::string& flag, const std::string& text) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end || !std::isfinite(v) || v < 0 || v > 1e9)
    throw BadInput(flag + ": expected a finite number of tokens in [0, 1e9], got '" + text + "'");
  return v;
}

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

namespace {

// The parsed list flags; the plan is their cartesian product, nested in the order of dims().
struct PlanLists {
  std::vector<std::string> models;
  std::vector<DType> dtypes;
  std::vector<Variants> variants;
  std::vector<int> batches, prompts, gens;
  std::vector<std::int32_t> prompt_ids;  // --prompt-ids: every case's prompt (or empty)

  std::array<std::size_t, 6> dims() const {
    return {models.size(),  dtypes.size(),  variants.size(),
            batches.size(), prompts.size(), gens.size()};
  }
};

// The scalar flags (and --dtype, checked against the backend), in the order their errors are
// reported. Returns what every case shares, as a CaseSpec whose model is "*" and whose list
// fields keep their defaults (the sweep key reads it that way); sets plan.backend, .threads.
CaseSpec parse_scalars(const RunOptions& o, RunPlan& plan, PlanLists& lists) {
  // Infinity (also what 1e400 parses to) passes a "> 0" check and turns the metric it divides
  // into 0 or null: every real-valued flag must be finite.
  auto positive = [](const std::optional<double>& v) { return !v || (std::isfinite(*v) && *v > 0); };
  if (!positive(o.slo_ttft_p99_ms))
    throw BadInput("--slo-ttft-p99-ms: expected a positive, finite number of milliseconds");
  if (!positive(o.slo_tpot_p99_ms))
    throw BadInput("--slo-tpot-p99-ms: expected a positive, finite number of milliseconds");
  const BackendChoice choice = choose_backend(o.backend);
  plan.backend = choice.name;
  plan.backend_notice = choice.notice;
  lists.dtypes = parse_choice_list<DType>("--dtype", o.dtype, "fp32, fp16, bf16, int8 or int4",
                                          [](const std::string& d) { return parse_dtype(d); });
  // The int8/int4 kernels are CPU-only (kernels/cpu/quant.h); CUDA refuses them up front.
  if (plan.backend == "cuda")
    for (DType dt : lists.dtypes)
      if (dtype_is_quantized(dt))
        throw BadInput("--dtype " + std::string(dtype_name(dt)) +
                       " is CPU-only for now (use --backend cpu)");
  CaseSpec common;
  common.model = "*";
  common.backend = plan.backend;
  common.warmup = parse_int("--warmup", o.warmup, 0, 1000000);
  common.repeat = parse_int("--repeat", o.repeat, 1, 1000000);
  const int threads_flag = o.threads.empty() ? 0 : parse_int("--threads", o.threads, 0, 4096);
  plan.threads = threads_flag > 0 ? threads_flag : omp_get_max_threads();
  common.threads = plan.threads;
  common.seed = std::uint64_t(parse_int("--seed", o.seed, 0, INT_MAX));
  if (!is_output_format(o.format) && o.format != "jsonl")
    throw BadInput("--format: expected table, wide, md, csv, json or jsonl, got '" + o.format +
                   "'");
  if (!positive(o.peak_bw_gbps))
    throw BadInput("--peak-bw-gbps: expected a positive, finite number of GB/s");
  if (!positive(o.peak_tflops))
    throw BadInput("--peak-tflops: expected a positive, finite number of TFLOP/s");
  check_db_path(o.db);
  const auto trace = parse_trace_level(o.trace);
  if (!trace) throw BadInput("--trace: expected off, steps or ops, got '" + o.trace + "'");
  common.distinct_prompts = o.distinct_prompts;
  common.trace = *trace;
  common.profile_range = o.profile_range;
  return common;
}

// Every variant once per value of `values`, set as `field`, innermost.
template <class T>
void expand_variants(PlanLists& lists, const std::vector<T>& values, T Variants::*field) {
  std::vector<Variants> out;
  for (const Variants& v : lists.variants)
    for (const T& x : values) {
      Variants with = v;
      with.*field = x;
      out.push_back(with);
    }
  lists.variants = std::move(out);
}

// --kv-cache-dtype, --fuse, --decode-attention innermost; --variants bundles leave them alone.
void apply_fuse_and_attention(const RunOptions& o, PlanLists& lists) {
  expand_variants(lists,
                  parse_choice_list<KvDtype>("--kv-cache-dtype", o.kv_dtype, "fp32 or fp16",
                                             parse_kv_dtype),
                  &Variants::kv_dtype);
  expand_variants(lists,
                  parse_choice_list<FuseMode>("--fuse", o.fuse, "none or small", parse_fuse_mode),
                  &Variants::fuse);
  expand_variants(lists,
                  parse_choice_list<DecodeAttention>("--decode-attention", o.decode_attention,
                                                     "tiled or streamed", parse_decode_attention),
                  &Variants::decode_attention);
}

// --prompt-len-stddev and --output-len-stddev: ragged cases, which run on the scheduler and
// take no engine variant.
void apply_ragged_lengths(const RunOptions& o, PlanLists& lists) {
  const double prompt_sd = parse_stddev("--prompt-len-stddev", o.prompt_len_stddev);
  const double output_sd = parse_stddev("--output-len-stddev", o.output_len_stddev);
  if (prompt_sd <= 0 && output_sd <= 0) return;
  // On the scheduler's paged pool with the device argmax: no variant but --timer, the pool's dtype.
  const std::string flag = prompt_sd > 0 ? "--prompt-len-stddev" : "--output-len-stddev";
  for (Variants v : lists.variants) {
    v.timer = TimerMode::kDevice, v.kv_dtype = KvDtype::kFp32;
    if (!v.is_default())
      throw BadInput(flag + ": a ragged batch runs through the continuous-batching scheduler "
                     "(paged KV cache, argmax on the device) and cannot be combined with the "
                     "engine variant " + v.describe());
  }
  if (prompt_sd > 0 && !lists.prompt_ids.empty())
    throw BadInput("--prompt-len-stddev: cannot be combined with --prompt-ids (the prompt's "
                   "length is fixed; --output-len-stddev still works)");
  for (Variants& v : lists.variants) {
    v.prompt_len_stddev = prompt_sd;
    v.output_len_stddev = output_sd;
  }
}

// The list flags other than --dtype: values, repeats and combinations.
void parse_lists(const RunOptions& o, PlanLists& lists) {
  lists.models = parse_unique_word_list("--model", o.model);
  lists.batches = parse_unique_int_list("--batch", o.batch, 1, 1 << 20);
  lists.prompt_ids = read_prompt_ids(o.prompt_ids);
  lists.prompts = parse_unique_int_list("--prompt-len", o.prompt_len, 1, 1 << 24);
  if (!lists.prompt_ids.empty()) {
    const int n = int(lists.prompt_ids.size());
    if (o.prompt_len_given && (lists.prompts.size() != 1 || lists.prompts[0] != n))
      throw BadInput("--prompt-len: conflicts with the " + std::to_string(n) +
                     " ids of --prompt-ids (leave --prompt-len out)");
    if (o.distinct_prompts)
      throw BadInput("--distinct-prompts: cannot be combined with --prompt-ids");
    lists.prompts = {n};
  }
  lists.gens = parse_unique_int_list("--max-new-tokens", o.max_new_tokens, 1, 1 << 24);
  lists.variants = parse_variants(o);
  apply_fuse_and_attention(o, lists);
  apply_ragged_lengths(o, lists);
}

// The plan's case count from the list lengths, before anything is built: `total` gets the
// whole plan's, the return value this shard's. BadInput past --max-cases (or INT_MAX).
std::uint64_t check_case_count(const RunOptions& o, const PlanLists& lists,
                               std::pair<int, int> shard, std::uint64_t& total) {
  const std::int64_t max_cases =
      o.max_cases.empty() ? kDefaultMaxCases : parse_int("--max-cases", o.max_cases, 1, INT_MAX);
  const auto dims = lists.dims();
  total = 1;  // saturates at UINT64_MAX instead of wrapping
  for (std::size_t d : dims)
    total = d != 0 && total > UINT64_MAX / d ? UINT64_MAX : total * d;
  const auto stride = std::uint64_t(shard.second), first = std::uint64_t(shard.first - 1);
  const std::uint64_t mine_count = total > first ? (total - first + stride - 1) / stride : 0;
  if (mine_count <= std::uint64_t(max_cases) && total <= std::uint64_t(INT_MAX))
    return mine_count;
  const std::string factors =
      std::to_string(dims[0]) + " model x " + std::to_string(dims[1]) + " dtype x " +
      std::to_string(dims[2]) + " variant x " + std::to_string(dims[3]) + " batch x " +
      std::to_string(dims[4]) + " prompt-len x " + std::to_string(dims[5]) + " max-new-tokens";
  const std::string all = total == UINT64_MAX ? "over 1.8e19" : std::to_string(total);
  const std::string count = stride > 1 ? "shard " + o.shard + " has " +
                                             std::to_string(mine_count) + " of the plan's " +
                                             all + " cases"
                                       : "the plan has " + all + " cases";
  if (total > std::uint64_t(INT_MAX) && mine_count <= std::uint64_t(max_cases))
    throw BadInput("--max-cases: " + count + " (" + factors + "); a plan holds at most " +
                   std::to_string(INT_MAX) + " cases, shard or not");
  throw BadInput("--max-cases: " + count + " (" + factors + "), over the limit of " +
                 std::to_string(max_cases) +
                 "; shorten the lists or raise the limit with --max-cases N");
}

// Each model resolves (a checkpoint's tensors are validated: header, shapes, offsets, no data
// read), takes the prompt ids, and holds every prompt plus its new tokens.
void check_models(const PlanLists& lists) {
  for (const auto& name : lists.models) {
    const ModelConfig c = resolve_model(name);
    if (!find_preset(name)) {
      try {  // a broken checkpoint is bad input (exit 2) and nothing runs
        CheckpointWeights validate(name, c);
      } catch (const BadInput& e) {
        throw BadInput(std::string("--model: ") + e.what());
      }
    }
    for (auto id : lists.prompt_ids)
      if (id >= c.vocab_size)
        throw BadInput("--prompt-ids: token id " + std::to_string(id) +
                       " is outside the vocabulary of '" + name + "' [0, " +
                       std::to_string(c.vocab_size) + ")");
    for (int p : lists.prompts)
      for (int g : lists.gens)
        if (p + g > c.max_seq_len)
          throw BadInput("--prompt-len/--max-new-tokens: prompt " + std::to_string(p) + " + " +
                         std::to_string(g) + " new tokens exceeds the context length of '" +
                         name + "' (" + std::to_string(c.max_seq_len) + ")");
  }
}

// The sweep key names the whole (unsharded) plan: its lists and common settings, hashed, so
// every shard of one sweep carries the same key (merge joins them into one run group) without
// building every case of a large plan.
std::string sweep_key_of(const std::string& backend, const PlanLists& lists,
                         const CaseSpec& common) {
  std::string def = "backend=" + backend + ";models=";
  for (const auto& m : lists.models) def += m + ",";
  def += ";dtypes=";
  for (DType dt : lists.dtypes) def += std::string(dtype_name(dt)) + ",";
  def += ";variants=";
  for (const Variants& v : lists.variants) def += variants_json(v).dump() + ",";
  def += ";batches=";
  for (int b : lists.batches) def += std::to_string(b) + ",";
  def += ";prompts=";
  for (int p : lists.prompts) def += std::to_string(p) + ",";
  def += ";gens=";
  for (int g : lists.gens) def += std::to_string(g) + ",";
  return plan_key({def, case_key(common)}, "");
}

}  // namespace

RunPlan make_plan(const RunOptions& o) {
  RunPlan plan;
  std::pair<int, int> shard{1, 1};
  if (!o.shard.empty()) {
    shard = parse_shard(o.shard);
    plan.shard = o.shard;
  }
  PlanLists lists;
  CaseSpec common = parse_scalars(o, plan, lists);
  parse_lists(o, lists);
  for (const Variants& v : lists.variants) {
    check_kv_dtype(v);
    if (plan.backend == "cuda") continue;
    if (v.timer == TimerMode::kCupti || v.timer == TimerMode::kEvents)
      throw BadInput("--timer " + std::string(timer_mode_name(v.timer)) +
                     " needs --backend cuda (CPU ops are timed by the host clock)");
    if (v.cuda_graphs)
      throw BadInput("--cuda-graphs on needs --backend cuda (the CPU backend launches "
                     "nothing to capture)");
    if (v.decode_attention != DecodeAttention::kTiled)
      throw BadInput("--decode-attention " +
                     std::string(decode_attention_name(v.decode_attention)) +
                     " needs --backend cuda (the CPU backend has one attention kernel)");
  }
  common.prompt = lists.prompt_ids;
  std::uint64_t total = 0;
  const std::uint64_t mine_count = check_case_count(o, lists, shard, total);
  check_models(lists);
  plan.sweep_key = sweep_key_of(plan.backend, lists, common);
  // Only this shard's cases are built: case i (in model, dtype, variants, batch, prompt,
  // new-tokens order) is decoded from its index, so N shards cover the plan exactly once.
  const auto dims = lists.dims();
  plan.cases.reserve(std::size_t(mine_count));
  const auto stride = std::uint64_t(shard.second);
  for (std::uint64_t i = std::uint64_t(shard.first - 1); i < total; i += stride) {
    std::uint64_t rest = i;
    std::size_t at[6];
    for (int d = 5; d >= 0; --d) {
      at[d] = std::size_t(rest % dims[d]);
      rest /= dims[d];
    }
    CaseSpec s = common;
    s.model = lists.models[at[0]];
    s.dtype = lists.dtypes[at[1]];
    s.variants = lists.variants[at[2]];
    s.batch = lists.batches[at[3]];
    s.prompt_len = lists.prompts[at[4]];
    s.max_new_tokens = lists.gens[at[5]];
    plan.cases.push_back(std::move(s));
    plan.case_index.push_back(int(i));
  }
  return plan;
}

}  // namespace llmbench
