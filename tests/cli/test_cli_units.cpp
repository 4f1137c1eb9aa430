// Pieces of the subcommands that need no process: the --metric words of compare and
// export gbench (tools/cli/metric_flags.h), typo suggestions (tools/cli/suggest.h), the
// debug-build warning and how numbers and statistics are named and printed (tools/console,
// tools/store/result_fields.h).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <limits>
#include <map>
#include <regex>

#include "kernels/common/error.h"
#include "tools/cli/commands.h"
#include "tools/cli/metric_flags.h"
#include "tools/cli/peer_flags.h"
#include "tools/cli/suggest.h"
#include "tools/console/build_warning.h"
#include "tools/console/field_rows.h"
#include "tools/console/result_rows.h"
#include "tools/store/result_fields.h"
#include "tools/store/variants_json.h"

namespace llmbench {
namespace {

TEST(MetricFlags, ParsesMetricLists) {
  EXPECT_EQ(parse_metrics("--metric", "tpot,ttft"), (std::vector<Metric>{Metric::kTpot, Metric::kTtft}));
  EXPECT_EQ(parse_metrics("--metric", "e2e,e2e"), (std::vector<Metric>{Metric::kE2e}));
  EXPECT_EQ(parse_metrics("--metric", "all").size(), 4u);
  EXPECT_EQ(parse_metrics("--metric", "throughput,all").front(), Metric::kThroughput);
  EXPECT_THROW(parse_metrics("--metric", "latency"), BadInput);
  EXPECT_THROW(parse_metrics("--metric", ""), BadInput);
  EXPECT_THROW(parse_metrics("--metric", "ttft,"), BadInput);
}

TEST(Suggest, EditDistanceCountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("run", "run"), 0);
  EXPECT_EQ(edit_distance("runn", "run"), 1);      // insertion
  EXPECT_EQ(edit_distance("--bach", "--batch"), 1);  // deletion
  EXPECT_EQ(edit_distance("qeury", "query"), 1);   // two neighbours swapped
  EXPECT_EQ(edit_distance("rpeort", "report"), 1);
  EXPECT_EQ(edit_distance("", "abc"), 3);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
}

TEST(Suggest, NearestWordOnlyWhenCloseEnough) {
  const std::vector<std::string> subs = {"run", "sweep", "merge", "models", "roofline", "query",
                                         "import", "compare", "export", "serve", "load", "report"};
  EXPECT_EQ(nearest_word("runn", subs), "run");
  EXPECT_EQ(nearest_word("reprot", subs), "report");
  EXPECT_EQ(nearest_word("sever", subs), "serve");
  EXPECT_EQ(nearest_word("benchmark", subs), std::nullopt);  // nothing near
  EXPECT_EQ(nearest_word("xy", subs), std::nullopt);
  const std::vector<std::string> flags = {"--batch", "--backend", "--prompt-len", "--repeat"};
  EXPECT_EQ(nearest_word("--bach", flags), "--batch");
  EXPECT_EQ(nearest_word("--prompt_len", flags), "--prompt-len");
  EXPECT_EQ(nearest_word("--repet", flags), "--repeat");
}

// Every hint for another tool's flag (vLLM, AIPerf) is given where that flag is not one of
// llmbench's own (it would never be shown), and every llmbench flag it names exists there.
TEST(Suggest, PeerToolFlagsNameFlagsTheSubcommandHas) {
  CLI::App root;
  CommandContext ctx;
  add_run_command(root, ctx);
  add_serve_command(root, ctx);
  add_load_command(root, ctx);
  const std::regex named(R"(--[a-z][a-z0-9-]*)");
  for (const PeerFlag& p : peer_flags()) {
    SCOPED_TRACE(std::string(p.subcommand) + " " + std::string(p.flag));
    const CLI::App* sub = root.get_subcommand(std::string(p.subcommand));
    EXPECT_EQ(sub->get_option_no_throw(std::string(p.flag)), nullptr);
    const std::string ours(p.ours);
    for (std::sregex_iterator m(ours.begin(), ours.end(), named), end; m != end; ++m)
      EXPECT_NE(sub->get_option_no_throw(m->str()), nullptr) << m->str();
    EXPECT_EQ(peer_flag_hint(p.subcommand, p.flag),
              std::string(p.tool) + "'s " + std::string(p.flag) + " " + ours);
  }
  EXPECT_EQ(peer_flag_hint("load", "--num-prompts"), "vLLM's --num-prompts is --num-requests here");
  EXPECT_EQ(peer_flag_hint("run", "--num-prompts"), std::nullopt);  // only where vLLM has it
  EXPECT_EQ(peer_flag_hint("load", "--bach"), std::nullopt);
}

TEST(BuildWarning, OneLineOnlyWithoutOptimisation) {
  EXPECT_EQ(debug_build_warning(true), "");
  EXPECT_EQ(debug_build_warning(false), "warning: debug build, performance may be affected\n");
#if LLMBENCH_PRODUCT_OPTIMIZED  // the libraries' build type (the test code is built at -O0)
  EXPECT_TRUE(built_with_optimisation());
#else
  EXPECT_FALSE(built_with_optimisation());
#endif
}

TEST(Numbers, ShortestFormWithoutArithmeticArtefacts) {
  EXPECT_EQ(format_number(130276.1 / 1e6), "0.1302761");  // not 0.13027609999999998
  EXPECT_EQ(format_number(0.1 + 0.2), "0.3");
  EXPECT_EQ(format_number(1.0 / 3.0), "0.333333333333333");  // 15 significant digits
  EXPECT_EQ(format_number(2.0), "2");
  EXPECT_EQ(format_number(123456789012.5), "123456789012.5");
  EXPECT_EQ(format_number(1e-5), "1e-05");
  EXPECT_EQ(format_number(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(field_cell(FieldValue(130276.1 / 1e6), 2, true), "0.1302761");  // csv
  EXPECT_EQ(field_cell(FieldValue(130276.1 / 1e6), 2, false), "0.13");      // table
  EXPECT_EQ(field_cell(FieldValue(std::monostate{}), 2, false), "n/a");
  EXPECT_EQ(field_cell(FieldValue(std::monostate{}), 2, true), "");
  EXPECT_EQ(field_json(FieldValue(130276.1 / 1e6), false).dump(), "0.1302761");
}

TEST(Statistics, PercentileNamesSayWhichTail) {
  std::vector<std::string> lower, higher;
  for (const Statistic& s : kStatistics) {
    lower.push_back(statistic_suffix(s, false));
    higher.push_back(statistic_suffix(s, true));
  }
  EXPECT_EQ(lower, (std::vector<std::string>{"mean", "stdev", "p10", "p50", "p90", "p95", "p99"}));
  // Higher is better (tokens/s): the slow tail is the low one, and the names say so.
  EXPECT_EQ(higher, (std::vector<std::string>{"mean", "stdev", "p90", "p50", "p10", "p5", "p1"}));
}

// One entry of a distribution metric gives one field per statistic, each reading the samples.
TEST(Statistics, OneEntryExpandsOverEveryStatistic) {
  struct Src {
    SampleStats s;
  };
  std::vector<Field<Src>> fields;
  add_statistic_fields(fields, "rate_tok_s", "rate", 1, true,
                       +[](const Src& x) -> const SampleStats* { return &x.s; }, {"p50"});
  ASSERT_EQ(fields.size(), std::size(kStatistics));
  Src src{sample_stats({10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110})};
  std::map<std::string, double> got;
  for (const auto& f : fields) got[f.name] = std::get<double>(f.get(src, FieldSink::kCsv));
  EXPECT_DOUBLE_EQ(got.at("rate_tok_s_mean"), 60);
  EXPECT_DOUBLE_EQ(got.at("rate_tok_s_p50"), 60);
  EXPECT_DOUBLE_EQ(got.at("rate_tok_s_p1"), 11);  // 10 + 0.01 x 10 x 10
  EXPECT_DOUBLE_EQ(got.at("rate_tok_s_p90"), 100);
  // Only the named statistic is in the table.
  for (const auto& f : fields) EXPECT_EQ(bool(f.outputs & kTable), f.name == "rate_tok_s_p50") << f.name;
}

// One rendering of variants: the stored JSON reads back to the same variants, and its label is
// what every output prints.
TEST(VariantsLabel, StoredJsonReadsBackAndPrintsOneWay) {
  Variants naive;
  naive.qkv = QkvLayout::kPermute;
  naive.kv_cache = KvCacheKind::kPaged;
  naive.kv_cache_block = 4;
  naive.logits = LogitsMode::kAll;
  Variants ragged;
  ragged.prompt_len_stddev = 8;
  ragged.timer = TimerMode::kHostNoSync;
  Variants graphs;
  graphs.cuda_graphs = true;
  Variants streamed;
  streamed.decode_attention = DecodeAttention::kStreamed;
  streamed.fuse = FuseMode::kSmall;
  Variants half_cache;
  half_cache.kv_dtype = KvDtype::kFp16;
  for (const Variants& v : {Variants{}, naive, ragged, graphs, streamed, half_cache}) {
    const auto back = variants_from_json(variants_json(v));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, v);
    EXPECT_EQ(variants_label(variants_json(v).dump()), variants_label(v));
  }
  EXPECT_EQ(variants_label(Variants{}), "default");
  EXPECT_EQ(variants_label(naive), "qkv=permute kv_cache=paged/4 logits=all");
  EXPECT_EQ(variants_label(graphs), "cuda_graphs=on");
  // Off is the default and leaves the stored JSON (and so every older case key) as it was.
  EXPECT_FALSE(variants_json(Variants{}).contains("cuda_graphs"));
  EXPECT_EQ(variants_json(graphs).at("cuda_graphs"), "on");
  // Likewise tiled, the default attention kernel.
  EXPECT_EQ(variants_label(streamed), "fuse=small decode_attention=streamed");
  EXPECT_FALSE(variants_json(Variants{}).contains("decode_attention"));
  EXPECT_EQ(variants_json(streamed).at("decode_attention"), "streamed");
  EXPECT_FALSE(variants_from_json(nlohmann::json{{"decode_attention", "flash"}}).has_value());
  // And fp32, the default KV cache.
  EXPECT_EQ(variants_label(half_cache), "kv_cache_dtype=fp16");
  EXPECT_FALSE(variants_json(Variants{}).contains("kv_cache_dtype"));
  EXPECT_EQ(variants_json(half_cache).at("kv_cache_dtype"), "fp16");
  EXPECT_FALSE(variants_from_json(nlohmann::json{{"kv_cache_dtype", "bf16"}}).has_value());
  EXPECT_EQ(variants_label(std::string("{}")), "default");  // rows from before variants
  EXPECT_EQ(variants_label(std::string("not json")), "not json");
  EXPECT_EQ(variants_label(std::string(R"({"qkv":"sideways"})")), R"({"qkv":"sideways"})");
}

// A case's notes (how it ran where its variants do not say) are in its JSON only when it has some.
TEST(CaseJson, NotesOnlyWhenTheCaseHasSome) {
  CaseResult r;
  r.spec.model = "tiny";
  EXPECT_FALSE(case_json(r).contains("notes"));
  r.notes = {"cuda graphs: only the fast paths are captured; decode steps run eagerly"};
  const auto j = case_json(r);
  ASSERT_TRUE(j.contains("notes"));
  EXPECT_EQ(j["notes"].size(), 1u);
  EXPECT_EQ(j["notes"][0], r.notes[0]);
}

}  // namespace
}  // namespace llmbench
