// llmbench's entry point: builds the CLI from the subcommands in tools/cli/cmd_*.cpp, runs the
// chosen one, and maps errors to exit codes (README, "Exit codes"):
//   0  success (and --help, --version)
//   1  a failed case, a regression found by `compare`, or an internal error
//   3  `compare` could not decide (inconclusive; --allow-inconclusive makes it 0)
//   2  bad input: one `error: ...` line on stderr naming what was wrong (a bad LLMBENCH_CPU_ISA
//      too, before any command) -- a mistyped
//      subcommand or flag gets the nearest known one ("did you mean run?", suggest.h); a bare
//      `llmbench` prints the usage on stderr and exits 2 too, as grep does, since it did nothing
// A subcommand may return another code of its own; its file's header says so.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <string>
#include <vector>

#include "kernels/common/error.h"
#include "kernels/cpu/cpu_isa.h"
#include "tools/cli/commands.h"
#include "tools/cli/suggest.h"
#include "tools/build_info/version.h"

int main(int argc, char** argv) {
  using namespace llmbench;
  CommandContext ctx;
  for (int i = 0; i < argc; ++i) ctx.command_line += (i ? " " : "") + std::string(argv[i]);

  CLI::App app{"llmbench: benchmark and profile LLM inference", "llmbench"};
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
  add_history_command(app, ctx);
  add_bisect_command(app, ctx);

  const std::vector<std::string> args(argv, argv + argc);
  if (argc == 1) {
    fmt::print(stderr, "{}", app.help());
    return 2;
  }
  if (auto e = unknown_subcommand_error(app, args)) {
    fmt::print(stderr, "error: {}\n", *e);
    return 2;
  }
  try {
    // LLMBENCH_CPU_ISA (kernels/cpu/cpu_isa.h), checked before any command runs: a bad value is
    // bad input; a path this CPU lacks is said once, here.
    cpu::cpu_isa();
    if (const std::string note = cpu::cpu_isa_note(); !note.empty())
      fmt::print(stderr, "note: {}\n", note);
    app.parse(argc, argv);
    return ctx.exit_code;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's message for an unknown flag lists the leftovers; name the flag and its fix.
    const auto typo = unknown_flag_error(app, args);
    fmt::print(stderr, "error: {}\n", typo ? *typo : std::string(e.what()));
    return 2;
  } catch (const BadInput& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
