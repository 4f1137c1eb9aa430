// `llmbench export FORMAT ...`: writes results or traces in other tools' formats. One
// subcommand per format, each in its own file: `gbench` (export_gbench.h).
#include <CLI/CLI.hpp>

#include "tools/commands.h"
#include "tools/export_gbench.h"

namespace llmbench {

void add_export_command(CLI::App& root, CommandContext& ctx) {
  CLI::App* cmd = root.add_subcommand("export", "Export results or traces to other tools' formats");
  cmd->require_subcommand(1);
  add_export_gbench(cmd, ctx);
}

}  // namespace llmbench
