// SentencePiece text prompts: a tiny SentencePiece model is trained here, with the library's
// own trainer on a generated text (nothing is downloaded), then
//   - Tokenizer encodes exactly as the SentencePiece processor does and decodes back,
//   - with byte fallback, the <0xNN> pieces of a multi-byte character arrive as the whole
//     character when streamed (tools/text/stream_decoder.h),
//   - a model file with more pieces than the vocabulary, or a file that is not a model, is
//     refused (BadInput naming the file),
//   - a server given the tokenizer.model runs the prompt's SentencePiece ids: its tokens equal
//     the offline path's for those ids, and usage.prompt_tokens counts them.
// Skipped when llmbench was built without SentencePiece.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "kernels/common/error.h"
#include "tests/serve/serve_fixture.h"
#include "tools/text/chat_template.h"
#include "tools/text/chat_tokens.h"
#include "tools/text/stream_decoder.h"

#ifdef LLMBENCH_HAVE_SENTENCEPIECE
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#endif

namespace llmbench::test {
namespace {

namespace fs = std::filesystem;

#ifdef LLMBENCH_HAVE_SENTENCEPIECE

// Trains a unigram model on 3000 generated sentences: `flags` adds to the trainer's.
std::string train_model(const std::string& name, const std::string& flags) {
  // Per process: ctest runs each test in its own process, in parallel.
  const fs::path dir =
      fs::path(LLMBENCH_TEST_SCRATCH) / "sentencepiece" / std::to_string(::getpid());
  fs::create_directories(dir);
  const fs::path corpus = dir / "corpus.txt";
  {
    const char* words[] = {"the", "engine", "serves", "tokens", "prompt", "batch", "decode",
                           "prefill", "latency", "throughput", "model", "cache", "block",
                           "request", "stream", "hello", "world", "llmbench", "fast", "slow"};
    // The words above and made-up words of two or three syllables, so that the corpus has
    // enough distinct substrings for 120 pieces.
    const char* syllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "pe", "qua",
                               "zen", "dor", "fi", "gu", "ho", "ja", "bex", "cy", "wu", "ly"};
    std::ofstream out(corpus);
    std::uint64_t x = 12345;
    auto next = [&x](int n) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      return int((x >> 33) % std::uint64_t(n));
    };
    for (int line = 0; line < 3000; ++line) {
      for (int w = 0; w < 8; ++w) {
        out << (w ? " " : "");
        if (next(2) == 0) {
          out << words[next(20)];
        } else {
          for (int k = 2 + next(2); k > 0; --k) out << syllables[next(20)];
        }
      }
      out << ".\n";
    }
  }
  const std::string prefix = (dir / name).string();
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + corpus.string() + " --model_prefix=" + prefix +
      " --model_type=unigram --character_coverage=1.0 --minloglevel=2 --num_threads=1 " + flags);
  if (!status.ok()) throw Error("SentencePiece training failed: " + status.ToString());
  return prefix + ".model";
}

// 120 pieces (once per process).
const std::string& trained_model() {
  static const std::string path = train_model("tok", "--vocab_size=120");
  return path;
}

// With byte fallback: a character the pieces lack is written as its UTF-8 bytes, one <0xNN>
// piece each (as Llama 2's tokenizer writes them); 256 byte pieces and 144 others.
const std::string& byte_fallback_model() {
  static const std::string path = train_model("tok_bytes", "--vocab_size=400 --byte_fallback=true");
  return path;
}

TEST(SentencePieceTokenizer, EncodesAsTheProcessorAndDecodesBack) {
  const Tokenizer t = Tokenizer::sentencepiece(trained_model(), 256);
  EXPECT_TRUE(t.is_sentencepiece());
  EXPECT_NE(t.name().find("120 pieces"), std::string::npos) << t.name();
  sentencepiece::SentencePieceProcessor sp;
  ASSERT_TRUE(sp.Load(trained_model()).ok());
  const std::string text = "hello world. the engine serves tokens";
  const std::vector<int> want = sp.EncodeAsIds(text);
  const std::vector<std::int32_t> got = t.encode(text);
  ASSERT_EQ(got, std::vector<std::int32_t>(want.begin(), want.end()));
  EXPECT_LT(got.size(), text.size());  // pieces, not bytes
  EXPECT_EQ(t.decode(got), text);
  // Streamed pieces: word boundaries as spaces, so the pieces read as the text (with the
  // leading space SentencePiece's dummy prefix adds).
  std::string streamed;
  StreamDecoder d(t);
  for (auto id : got) streamed += d.push(id);
  EXPECT_EQ(streamed + d.finish(), " " + text);
  // Ids beyond the tokenizer's pieces (the model's vocabulary is larger) are written "<id>".
  EXPECT_EQ(t.piece(200).bytes, "<200>");
  EXPECT_EQ(t.decode(std::vector<std::int32_t>{got[0], 200}), t.piece(got[0]).bytes.substr(1) + "<200>");
  // load's --tokenizer (a directory or this file) opens it the same way: the same ids.
  EXPECT_EQ(Tokenizer::open(trained_model()).encode(text), got);
}

// Byte pieces of one character arrive whole, in the chunk of the piece that completes it.
TEST(SentencePieceTokenizer, StreamedBytePiecesArriveAsWholeCharacters) {
  const Tokenizer t = Tokenizer::sentencepiece(byte_fallback_model());
  const std::string nihon = "\xE6\x97\xA5\xE6\x9C\xAC", smile = "\xF0\x9F\x98\x80";
  const std::vector<std::int32_t> ids = t.encode("hello " + nihon + smile);
  StreamDecoder d(t);
  std::vector<std::string> chunks;
  for (auto id : ids) chunks.push_back(d.push(id));
  chunks.back() += d.finish();
  // The 10 byte pieces of the three characters come last: 2 held, 日; 2 held, 本; 3 held, 😀.
  ASSERT_GE(chunks.size(), 11u);
  const std::vector<std::string> tail(chunks.end() - 10, chunks.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"", "", "\xE6\x97\xA5", "", "", "\xE6\x9C\xAC", "", "", "",
                                            smile}));
  std::string joined;
  for (const std::string& c : chunks) joined += c;
  EXPECT_EQ(joined, " hello " + nihon + smile);  // with the dummy prefix's space
  EXPECT_EQ(t.decode(ids), "hello " + nihon + smile);
}

TEST(SentencePieceTokenizer, RefusesTooManyPiecesAndOtherFiles) {
  try {
    Tokenizer::sentencepiece(trained_model(), 100);
    FAIL() << "a 120-piece model was accepted for a vocabulary of 100";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("120 pieces"), std::string::npos) << e.what();
  }
  const fs::path junk = fs::path(trained_model()).parent_path() / "junk.model";
  std::ofstream(junk) << "not a model";
  try {
    Tokenizer::sentencepiece(junk.string(), 256);
    FAIL() << "a text file was accepted as a SentencePiece model";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("junk.model"), std::string::npos) << e.what();
  }
}

// #42: one 240 KB chat message of repeated "<s>" took 21 s of CPU under the Llama 2 template,
// growing quadratically. Rendering and tokenizing are linear now: the 240 KB message costs
// about 4x the 60 KB one (at most 8x, where quadratic would be 16x) and well under 5 s here.
TEST(SentencePieceTokenizer, ARepeatedSpecialTokenMessageIsTokenizedInLinearTime) {
  const Tokenizer t = Tokenizer::sentencepiece(trained_model(), 256);
  const ChatTemplate llama2 = *chat_template_by_name("llama2");
  auto cost = [&](std::size_t repeats, std::size_t* n_ids) {
    std::string content;
    for (std::size_t i = 0; i < repeats; ++i) content += "<s>";
    const auto t0 = std::chrono::steady_clock::now();
    const auto ids = tokenize_chat(render_chat(llama2, {{"user", content}}), llama2.family, t);
    *n_ids = ids.size();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::size_t small_ids = 0, large_ids = 0;
  // The best of three of each, so one preemption on a loaded machine does not decide.
  double small = 1e9, large = 1e9;
  for (int i = 0; i < 3; ++i) {
    small = std::min(small, cost(20'000, &small_ids));  // 60 KB
    large = std::min(large, cost(80'000, &large_ids));  // 240 KB
  }
  std::printf("chat tokenizing of repeated <s>: 60 KB %.3f s, 240 KB %.3f s (x%.1f)\n", small,
              large, large / small);
  EXPECT_GE(large_ids, 80'000u);  // every "<s>" is at least one id
  EXPECT_LT(large, 5.0);
  EXPECT_LT(large / std::max(small, 1e-3), 8.0);
}

TEST_F(ServeTest, TextPromptRunsTheSentencePieceIds) {
  ServeOptions opt;
  opt.tokenizer_file = trained_model();
  start(*find_preset("tiny"), {}, opt);
  const std::string text = "the model serves a fast stream";
  const Tokenizer t = Tokenizer::sentencepiece(trained_model(), 256);
  const std::vector<std::int32_t> ids = t.encode(text);
  const auto want = offline(ids, 10);
  auto res = client().Post("/v1/completions", json{{"prompt", text}, {"max_tokens", 10}}.dump(),
                           "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json j = json::parse(res->body);
  EXPECT_EQ(j["choices"][0]["token_ids"].get<std::vector<std::int32_t>>(), want);
  EXPECT_EQ(j["choices"][0]["text"], t.decode(want));
  EXPECT_EQ(j["usage"]["prompt_tokens"], int(ids.size()));
  EXPECT_NE(int(ids.size()), int(text.size()));
  // Streamed: the same tokens, each chunk's text its piece.
  const Streamed s = post_stream(client(), {{"prompt", text}, {"max_tokens", 10},
                                            {"stream_options", {{"include_usage", true}}}});
  EXPECT_EQ(s.tokens, want);
  ASSERT_FALSE(s.chunks.empty());
  EXPECT_EQ(s.chunks.back()["usage"]["prompt_tokens"], int(ids.size()));
  // Token-id prompts bypass the tokenizer.
  auto by_ids = client().Post("/v1/completions", json{{"prompt", ids}, {"max_tokens", 10}}.dump(),
                              "application/json");
  ASSERT_TRUE(by_ids);
  EXPECT_EQ(json::parse(by_ids->body)["choices"][0]["token_ids"].get<std::vector<std::int32_t>>(),
            want);
}

#else

TEST(SentencePieceTokenizer, BuiltWithoutSentencePieceRefusesModelFiles) {
  EXPECT_FALSE(Tokenizer::sentencepiece_available());
  EXPECT_THROW(Tokenizer::sentencepiece("tokenizer.model", 256), BadInput);
  GTEST_SKIP() << "built without SentencePiece (libsentencepiece-dev)";
}

#endif

}  // namespace
}  // namespace llmbench::test
