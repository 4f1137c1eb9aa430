// `llmbench merge A.db B.db ... -o ALL.db` (tools/store/merge.h).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>

#include "tools/cli/commands.h"
#include "tools/store/merge.h"

namespace llmbench {

void add_merge_command(CLI::App& root, CommandContext& ctx) {
  struct Options {
    std::vector<std::string> inputs;
    std::string output;
    bool quiet = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = root.add_subcommand(
      "merge", "Join result databases (e.g. the shards of a sweep) into one, ids renumbered");
  cmd->footer("Examples:\n  llmbench merge s1.db s2.db -o all.db\n  llmbench merge nightly/*.db -o history.db --quiet");
  cmd->add_option("inputs", o->inputs, "Databases to merge")->required();
  cmd->add_option("-o,--output", o->output, "The merged database (created, or appended to)")
      ->required();
  cmd->add_flag("--quiet", o->quiet, "Print nothing on success");
  cmd->callback([o, &ctx] {
    const auto merged = merge_databases(o->inputs, o->output);
    if (!o->quiet) {
      std::int64_t runs = 0, imports = 0, cases = 0, events = 0, load_runs = 0;
      for (const auto& m : merged) {
        fmt::print(stderr, "merged {}: {} runs, {} imports, {} cases, {} events, {} load runs\n",
                   m.path, m.runs, m.imports, m.cases, m.events, m.load_runs);
        runs += m.runs, imports += m.imports, cases += m.cases, events += m.events;
        load_runs += m.load_runs;
      }
      fmt::print(stderr, "wrote {}: {} runs, {} imports, {} cases, {} events, {} load runs added\n",
                 o->output, runs, imports, cases, events, load_runs);
    }
    ctx.exit_code = 0;
  });
}

}  // namespace llmbench
