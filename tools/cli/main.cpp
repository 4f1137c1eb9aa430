// llmbench's entry point: builds the CLI from the subcommands in tools/cli/cmd_*.cpp, runs the
// chosen one, and maps errors to exit codes: 0 success, 1 a failed case or internal error,
// 2 bad input (one `error: ...` line on stderr naming what was wrong); a subcommand may return
// its own (compare: 1 a regression, 3 inconclusive).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "kernels/common/error.h"
#include "tools/cli/commands.h"
#include "tools/build_info/version.h"

int main(int argc, char** argv) {
  using namespace llmbench;
  CommandContext ctx;
  for (int i = 0; i < argc; ++i) ctx.command_line += (i ? " " : "") + std::string(argv[i]);

  CLI::App app{"llmbench: benchmark and profile LLM inference"};
  app.set_version_flag("--version",
                       fmt::format("llmbench {} (commit {}, {} build; CUDA backend: {}; CUDA "
                                   "toolkit: {}; NVTX: {})",
                                   kVersion, kGitCommit, kBuildType,
                                   kHaveCuda ? "compiled in" : "not compiled in", kCudaToolkit,
                                   kHaveNvtx ? "yes" : "no"));
  app.require_subcommand(1);
  add_run_command(app, ctx);
  add_sweep_command(app, ctx);
  add_merge_command(app, ctx);
  add_models_command(app, ctx);
  add_roofline_command(app, ctx);
  add_export_weights_command(app, ctx);
  add_query_command(app, ctx);
  add_import_command(app, ctx);
  add_compare_command(app, ctx);
  add_export_command(app, ctx);
  add_serve_command(app, ctx);
  add_load_command(app, ctx);
  add_report_command(app, ctx);

  try {
    app.parse(argc, argv);
    return ctx.exit_code;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const BadInput& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
