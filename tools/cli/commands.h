// The subcommands of `llmbench`, one file each. Each add_* creates its CLI11 subcommand on
// `root`; when the subcommand is chosen its callback runs it and stores the exit code in ctx.
#pragma once
#include <string>

namespace CLI {
class App;
}

namespace llmbench {

struct CommandContext {
  std::string command_line;  // argv joined, recorded with runs
  int exit_code = 0;
};

void add_run_command(CLI::App& root, CommandContext& ctx);
void add_sweep_command(CLI::App& root, CommandContext& ctx);
void add_merge_command(CLI::App& root, CommandContext& ctx);
void add_models_command(CLI::App& root, CommandContext& ctx);
void add_roofline_command(CLI::App& root, CommandContext& ctx);
void add_export_weights_command(CLI::App& root, CommandContext& ctx);
void add_query_command(CLI::App& root, CommandContext& ctx);
void add_import_command(CLI::App& root, CommandContext& ctx);
void add_compare_command(CLI::App& root, CommandContext& ctx);
void add_export_command(CLI::App& root, CommandContext& ctx);
void add_serve_command(CLI::App& root, CommandContext& ctx);
void add_load_command(CLI::App& root, CommandContext& ctx);
void add_report_command(CLI::App& root, CommandContext& ctx);
void add_history_command(CLI::App& root, CommandContext& ctx);
void add_bisect_command(CLI::App& root, CommandContext& ctx);

}  // namespace llmbench
