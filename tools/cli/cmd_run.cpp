// `llmbench run` and `llmbench sweep`: the same flags (tools/run/run_options.h) and the same loop
// (tools/run/run_driver.h). `sweep PROFILE` is `run --config PROFILE`.
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "kernels/common/error.h"
#include "tools/run/bundled_profiles.h"
#include "tools/console/printers.h"
#include "tools/run/profile.h"

#include "tools/cli/commands.h"
#include "tools/cli/history_flags.h"
#include "tools/run/run_driver.h"
#include "tools/run/run_options.h"

namespace llmbench {

namespace {

// The shared callback: apply the profile (if any) under the command-line flags, then run.
void run_with_profile(CLI::App* cmd, RunOptions& opts, const HistoryFlags& history,
                      CommandContext& ctx) {
  std::unique_ptr<AppliedProfile> profile;
  if (!opts.config.empty()) profile = std::make_unique<AppliedProfile>(apply_profile(cmd, opts));
  opts.prompt_len_given = cmd->get_option("--prompt-len")->count() > 0 ||
                          (profile && profile->applied.count("prompt-len"));
  for (const CLI::Option* opt : cmd->get_options())
    if (opt->count() > 0)
      for (const std::string& name : opt->get_lnames()) opts.given.insert(name);
  if (profile) opts.given.insert(profile->applied.begin(), profile->applied.end());
  ctx.exit_code = run_benchmarks(opts, profile.get(), ctx.command_line);
  append_latest_run(history, opts.db, /*serving=*/false);
}

}  // namespace

void add_run_command(CLI::App& root, CommandContext& ctx) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = root.add_subcommand("run", "Benchmark TTFT, TPOT, throughput, MBU and MFU");
  cmd->footer("Examples:\n  llmbench run --batch 16 --max-new-tokens 1\n  llmbench run --model tiny,small --batch 1,4,16 --prompt-len 128,512 --format csv\n  llmbench run --model tinyllama-1.1b --dtype fp32,bf16 --max-new-tokens 32 --trace off");
  add_run_flags(cmd, *opts);
  auto history = std::make_shared<HistoryFlags>();
  add_history_flags(cmd, *history);
  cmd->callback([cmd, opts, history, &ctx] { run_with_profile(cmd, *opts, *history, ctx); });
}

// `llmbench sweep --list`: the bundled profiles and what each is for.
void list_profiles() {
  std::vector<Row> rows;
  for (const EmbeddedFile& f : embedded_profile_files()) {
    const std::string name(f.name.substr(0, f.name.size() - 5));
    rows.push_back({name, load_profile(name, "sweep").description});
  }
  print_rows(std::cout, "table", {"profile", "description"}, rows);
}

void add_sweep_command(CLI::App& root, CommandContext& ctx) {
  auto opts = std::make_shared<RunOptions>();
  auto list = std::make_shared<bool>(false);
  CLI::App* cmd = root.add_subcommand(
      "sweep", "Run a sweep profile (profiles/*.toml, or a bundled name such as quick); "
               "the same as run --config PROFILE");
  cmd->footer("Examples:\n  llmbench sweep --list\n  llmbench sweep quick\n  llmbench sweep decode-scaling --shard 1/2 --db s1.db");
  add_run_flags(cmd, *opts);
  cmd->remove_option(cmd->get_option("--config"));  // the positional PROFILE is the config
  cmd->add_option("profile", opts->config, "Profile file, or a bundled profile name");
  cmd->add_flag("--list", *list, "List the bundled profiles and exit");
  auto history = std::make_shared<HistoryFlags>();
  add_history_flags(cmd, *history);
  cmd->callback([cmd, opts, list, history, &ctx] {
    if (*list) {
      list_profiles();
      ctx.exit_code = 0;
      return;
    }
    if (opts->config.empty())
      throw BadInput("sweep: expected a PROFILE (a .toml file or a bundled name; "
                     "`llmbench sweep --list` shows them)");
    run_with_profile(cmd, *opts, *history, ctx);
  });
}

}  // namespace llmbench
