// A checkpoint directory's end-of-sequence ids (tools/text/end_of_sequence.h): the tokenizer's
// eos token and generation_config.json's list, else config.json's; refusals name the file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/common/error.h"
#include "tests/text/small_bpe.h"
#include "tools/text/end_of_sequence.h"

namespace llmbench {
namespace {

namespace fs = std::filesystem;
using Ids = std::vector<std::int32_t>;

// A fresh directory holding the small BPE tokenizer.json (ids < 256).
fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(LLMBENCH_TEST_SCRATCH) /
                     ("eos_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  llmbench_test::write_small_bpe(d);
  return d;
}

void write(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }

Ids eos_of(const fs::path& d) {
  const Tokenizer t = Tokenizer::open(d.string(), 256);
  return end_of_sequence_ids(d.string(), t, 256);
}

TEST(EndOfSequence, TokenizerEosAndEveryGenerationConfigIdLikeLlama3Instruct) {
  const fs::path d = fresh_dir("llama3");
  write(d / "tokenizer_config.json", R"({"eos_token": {"content": "<|endoftext|>"}})");
  write(d / "generation_config.json", R"({"bos_token_id": 1, "eos_token_id": [251, 7, 251]})");
  write(d / "config.json", R"({"eos_token_id": 99})");  // generation_config.json wins
  EXPECT_EQ(eos_of(d), (Ids{7, 251, llmbench_test::kSmallBpeEndOfText}));
}

TEST(EndOfSequence, ConfigJsonWhenGenerationConfigNamesNone) {
  const fs::path d = fresh_dir("config");
  write(d / "generation_config.json", R"({"eos_token_id": null})");
  write(d / "config.json", R"({"eos_token_id": 251})");
  EXPECT_EQ(eos_of(d), (Ids{251}));
  write(d / "tokenizer_config.json", R"({"eos_token": "<|im_end|>"})");
  EXPECT_EQ(eos_of(d), (Ids{251}));  // the same token twice is one id
}

TEST(EndOfSequence, NoneForAPresetOrADirectoryThatNamesNone) {
  const Tokenizer bytes(256);
  EXPECT_TRUE(end_of_sequence_ids("tiny", bytes, 256).empty());
  const fs::path d = fresh_dir("none");
  EXPECT_TRUE(eos_of(d).empty());
  // An eos token the tokenizer does not have as one token is no id.
  write(d / "tokenizer_config.json", R"({"eos_token": "</s>"})");
  EXPECT_TRUE(eos_of(d).empty());
}

TEST(EndOfSequence, BadFilesAreRefusedNamingTheFileAndTheValue) {
  const fs::path d = fresh_dir("bad");
  const auto refused = [&](const std::string& file, const std::string& text,
                           const std::string& says) {
    write(d / file, text);
    try {
      eos_of(d);
      ADD_FAILURE() << file << " " << text << " was accepted";
    } catch (const BadInput& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(file), std::string::npos) << what;
      EXPECT_NE(what.find(says), std::string::npos) << what;
    }
    fs::remove(d / file);
  };
  refused("generation_config.json", R"({"eos_token_id": "2"})", "\"2\"");
  refused("generation_config.json", R"({"eos_token_id": [2, 1.5]})", "1.5");
  refused("generation_config.json", R"({"eos_token_id": 256})", "vocabulary of 256");
  refused("config.json", R"({"eos_token_id": -1})", "-1");
  refused("generation_config.json", "{", "not valid JSON");
  refused("tokenizer_config.json", "[1]", "expected a JSON object");
}

}  // namespace
}  // namespace llmbench
