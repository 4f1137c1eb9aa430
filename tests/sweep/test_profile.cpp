// Profiles: parsing and type checks with file:line:key errors, applying a profile under the
// command line's flags, attributing range errors to the profile, and every bundled profile
// being a valid plan.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include "kernels/common/error.h"
#include "tools/run/bundled_profiles.h"
#include "tools/run/profile.h"
#include "tools/run/run_options.h"

namespace llmbench {
namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_profile(text, "p.toml");
  } catch (const BadInput& e) {
    return e.what();
  }
  return "";
}

TEST(Profile, ReadsScalarsListsAndBooleansInFileOrder) {
  const Profile p = parse_profile(
      "description = \"demo\"\nmodel = \"tiny\"\nbatch = [1, 4, 16]\n"
      "distinct-prompts = true\npeak-tflops = 2.5\nrepeat = 3\n",
      "p.toml");
  EXPECT_EQ(p.description, "demo");
  ASSERT_EQ(p.entries.size(), 5u);
  EXPECT_EQ(p.entries[0].key, "model");
  EXPECT_EQ(p.entries[0].value, "tiny");
  EXPECT_EQ(p.entries[0].line, 2);
  EXPECT_EQ(p.entries[1].value, "1,4,16");
  EXPECT_TRUE(p.entries[2].is_bool);
  EXPECT_TRUE(p.entries[2].bool_value);
  EXPECT_EQ(p.entries[3].value, "2.5");
  EXPECT_EQ(p.entries[4].value, "3");
  EXPECT_EQ(p.entries[4].line, 6);
}

TEST(Profile, RejectsBadShapesWithFileLineAndKey) {
  EXPECT_EQ(parse_error("model = \"tiny\"\nbatch = []\n"),
            "p.toml:2: key 'batch': expected at least one value, got an empty list");
  EXPECT_EQ(parse_error("batch = [[1, 2]]\n"),
            "p.toml:1: key 'batch': list items must be strings or numbers, got a list");
  EXPECT_EQ(parse_error("model = \"\"\n"),
            "p.toml:1: key 'model': expected a value, got an empty string");
  EXPECT_EQ(parse_error("model = [\"a,b\"]\n"), "p.toml:1: key 'model': list item 'a,b' contains ','");
  EXPECT_EQ(parse_error("\n\n[run]\nbatch = 1\n"),
            "p.toml:3: key 'run': tables are not used in profiles; write the flag names as "
            "top-level keys");
  EXPECT_EQ(parse_error("description = 3\n"), "p.toml:1: key 'description': expected a string, got an integer");
  // TOML syntax errors and duplicate keys come from the parser, with their line.
  EXPECT_TRUE(parse_error("model = \"tiny\"\nbatch = [1,\n").starts_with("p.toml:2: ")) << parse_error("batch = [1,\n");
  EXPECT_TRUE(parse_error("batch = 1\nbatch = 2\n").starts_with("p.toml:2: "));
}

// A `llmbench run`-shaped command to apply profiles to.
struct Cmd {
  CLI::App app{"test"};
  RunOptions opts;
  Cmd() { add_run_flags(&app, opts); }
  void parse(std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last to first
    app.parse(args);
  }
};

std::string write_profile(const std::string& name, const std::string& text) {
  const std::string path = std::string(LLMBENCH_TEST_SCRATCH) + "/" + name;
  std::filesystem::create_directories(LLMBENCH_TEST_SCRATCH);
  std::ofstream(path) << text;
  return path;
}

TEST(Profile, CommandLineFlagsOverrideProfileValues) {
  const std::string path = write_profile(
      "override.toml", "model = \"tiny\"\nbatch = [1, 2]\nrepeat = 7\nquiet = true\n");
  Cmd c;
  c.parse({"--config", path, "--batch", "8"});
  const AppliedProfile ap = apply_profile(&c.app, c.opts);
  EXPECT_EQ(c.opts.batch, "8");  // the command line wins
  EXPECT_EQ(c.opts.model, "tiny");
  EXPECT_EQ(c.opts.repeat, "7");
  EXPECT_TRUE(c.opts.quiet);
  EXPECT_EQ(ap.applied, (std::set<std::string>{"model", "repeat", "quiet"}));
}

std::string apply_error(const std::string& text) {
  const std::string path = write_profile("bad.toml", text);
  Cmd c;
  c.parse({"--config", path});
  try {
    const AppliedProfile ap = apply_profile(&c.app, c.opts);
    make_plan_attributed(c.opts, &ap);
  } catch (const BadInput& e) {
    const std::string msg = e.what();
    return msg.substr(msg.find("bad.toml"));
  }
  return "";
}

TEST(Profile, UnknownKeysWrongTypesAndRangesNameFileLineAndKey) {
  EXPECT_TRUE(apply_error("model = \"tiny\"\nbatchh = 4\n")
                  .starts_with("bad.toml:2: key 'batchh': unknown key (profile keys are the long "
                               "flags of llmbench run: "));
  EXPECT_EQ(apply_error("quiet = 1\n"), "bad.toml:1: key 'quiet': expected true or false, got '1'");
  EXPECT_EQ(apply_error("batch = true\n"),
            "bad.toml:1: key 'batch': expected a value, got a boolean (only on/off flags take "
            "true or false)");
  EXPECT_EQ(apply_error("model = \"tiny\"\n\nbatch = [1, 0]\n"),
            "bad.toml:3: key 'batch': expected an integer in [1, 1048576], got 0");
  EXPECT_EQ(apply_error("repeat = 2.5\n"),
            "bad.toml:1: key 'repeat': expected an integer in [1, 1000000], got '2.5'");
  EXPECT_EQ(apply_error("trace = \"all\"\n"),
            "bad.toml:1: key 'trace': expected off, steps or ops, got 'all'");
  EXPECT_TRUE(apply_error("peak-tflops = \"fast\"\n").starts_with("bad.toml:1: key 'peak-tflops': "));
  EXPECT_EQ(apply_error("shard = \"3/2\"\n"),
            "bad.toml:1: key 'shard': expected an integer in [1, 2], got 3");
  EXPECT_EQ(apply_error("model = \"tiny\"\nprompt-len = 250\nmax-new-tokens = 32\n"),
            "bad.toml:2: key 'prompt-len': prompt 250 + 32 new tokens exceeds the context length "
            "of 'tiny' (256)");
  EXPECT_TRUE(apply_error("config = \"other.toml\"\n").starts_with("bad.toml:1: key 'config': unknown key"));
}

TEST(Profile, ErrorsInCommandLineValuesStillNameTheFlag) {
  const std::string path = write_profile("fine.toml", "model = \"tiny\"\n");
  Cmd c;
  c.parse({"--config", path, "--batch", "0"});
  const AppliedProfile ap = apply_profile(&c.app, c.opts);
  try {
    make_plan_attributed(c.opts, &ap);
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_STREQ(e.what(), "--batch: expected an integer in [1, 1048576], got 0");
  }
}

TEST(Profile, EveryBundledProfileIsAValidPlan) {
  const std::vector<std::string> required = {"quick", "decode-scaling", "prefill-scaling",
                                             "ci-smoke", "slo"};
  for (const auto& name : required)
    EXPECT_FALSE(find_bundled_profile(name).empty()) << "missing bundled profile " << name;
  for (const EmbeddedFile& f : embedded_profile_files()) {
    SCOPED_TRACE(std::string(f.name));
    Cmd c;
    c.parse({"--config", std::string(f.name), "--backend", "cpu"});
    const AppliedProfile ap = apply_profile(&c.app, c.opts);
    EXPECT_FALSE(ap.profile.description.empty());
    const RunPlan plan = make_plan_attributed(c.opts, &ap);
    EXPECT_FALSE(plan.cases.empty());
  }
  Cmd slo;
  slo.parse({"--config", "slo"});
  apply_profile(&slo.app, slo.opts);
  EXPECT_TRUE(slo.opts.slo_ttft_p99_ms && slo.opts.slo_tpot_p99_ms);
}

TEST(Profile, UnknownProfileNameListsTheBundledOnes) {
  Cmd c;
  c.parse({"--config", "no-such-profile"});
  try {
    apply_profile(&c.app, c.opts);
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("--config: no file 'no-such-profile' and no bundled "
                                         "profile of that name (bundled: "),
              std::string::npos);
  }
}

}  // namespace
}  // namespace llmbench
