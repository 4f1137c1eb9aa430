// The tokenizer.json byte-level BPE of tools/text against encodings derived by hand from the
// fixture tests/fixtures/load/tokenizer/tokenizer.json (ids 0-255 are the bytes, 256-264 nine
// merges, 265 the added token <|end|>), the three split patterns piece by piece, decoding back
// to bytes, and the refusals of files it cannot read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "kernels/common/error.h"
#include "tools/text/tokenizer.h"
#include "tools/text/tokenizer_bpe.h"

namespace llmbench {
namespace {

using Ids = std::vector<std::int32_t>;
const std::string kDir = std::string(LLMBENCH_FIXTURES) + "/load";

std::string bad_input(const std::function<void()>& f) {
  try {
    f();
  } catch (const BadInput& e) {
    return e.what();
  }
  return "(no BadInput)";
}

const BpeTokenizer& fixture_bpe() {
  static const BpeTokenizer t = BpeTokenizer::from_file(kDir + "/tokenizer/tokenizer.json");
  return t;
}

TEST(BpeTokenizer, ByteToUnicodeMap) {
  EXPECT_EQ(BpeTokenizer::byte_char('a'), "a");
  EXPECT_EQ(BpeTokenizer::byte_char(' '), "\xC4\xA0");   // U+0120 'Ġ': the 33rd remapped byte
  EXPECT_EQ(BpeTokenizer::byte_char('\n'), "\xC4\x8A");  // U+010A 'Ċ'
  EXPECT_EQ(BpeTokenizer::byte_char(0), "\xC4\x80");     // U+0100
  EXPECT_EQ(BpeTokenizer::byte_char(0xAD), "\xC5\x83");  // U+0143: the last remapped byte
}

TEST(BpeTokenizer, Gpt2SplitPieces) {
  using V = std::vector<std::string>;
  EXPECT_EQ(BpeTokenizer::pre_split("Hello, world 12345!\n\nok", BpeSplit::kGpt2),
            (V{"Hello", ",", " world", " 12345", "!", "\n", "\n", "ok"}));
  EXPECT_EQ(BpeTokenizer::pre_split("it's  fine  ", BpeSplit::kGpt2),
            (V{"it", "'s", " ", " fine", "  "}));
  EXPECT_EQ(BpeTokenizer::pre_split("IT'S", BpeSplit::kGpt2), (V{"IT", "'", "S"}));
}

TEST(BpeTokenizer, Llama3AndQwen2SplitPieces) {
  using V = std::vector<std::string>;
  EXPECT_EQ(BpeTokenizer::pre_split("Hello, world 12345!\n\nok", BpeSplit::kLlama3),
            (V{"Hello", ",", " world", " ", "123", "45", "!\n\n", "ok"}));
  EXPECT_EQ(BpeTokenizer::pre_split("Hello, world 12345!\n\nok", BpeSplit::kQwen2),
            (V{"Hello", ",", " world", " ", "1", "2", "3", "4", "5", "!\n\n", "ok"}));
  // Case-insensitive contractions; a punctuation mark joins the letters after it; a run of
  // spaces and newlines ends at its last newline.
  EXPECT_EQ(BpeTokenizer::pre_split("IT'S $x  \n y", BpeSplit::kLlama3),
            (V{"IT", "'S", " $", "x", "  \n", " y"}));
  // Two-byte letters stay in their word.
  EXPECT_EQ(BpeTokenizer::pre_split("caf\xC3\xA9 ok", BpeSplit::kLlama3),
            (V{"caf\xC3\xA9", " ok"}));
}

// Merges of the fixture, by rank: 0 "Ġ t", 1 "h e", 2 "Ġt he", 3 "i n", 4 "e r", 5 "Ġ s",
// 6 "l l", 7 "o w", 8 "Ġs er" (ids 256 + rank).
TEST(BpeTokenizer, EncodesAsDerivedByHand) {
  const BpeTokenizer& t = fixture_bpe();
  // "the": t h e -> (h,e) rank 1 -> [t][he].
  // " server": Ġ s e r v e r -> both (e,r) rank 4 -> Ġ s er v er -> (Ġ,s) rank 5 -> Ġs er v er
  //            -> (Ġs,er) rank 8 -> [Ġser][v][er].
  EXPECT_EQ(t.encode("the server"), (Ids{116, 257, 264, 118, 260}));
  // " the": Ġ t h e -> (Ġ,t) rank 0 -> Ġt h e -> (h,e) rank 1 -> Ġt he -> (Ġt,he) rank 2
  //         -> [Ġthe].
  EXPECT_EQ(t.encode(" the"), (Ids{258}));
  // "Hello  world\n": pieces "Hello", " ", " world", "\n"; only (l,l) merges.
  EXPECT_EQ(t.encode("Hello  world\n"), (Ids{72, 101, 262, 111, 32, 32, 119, 111, 114, 108, 100, 10}));
  // "it's in": "it", "'s", " in" -> (i,n) rank 3 -> [Ġ][in].
  EXPECT_EQ(t.encode("it's in"), (Ids{105, 116, 39, 115, 32, 259}));
  // The added token is cut out first, whatever surrounds it.
  EXPECT_EQ(t.encode("the<|end|>the"), (Ids{116, 257, 265, 116, 257}));
  // Bytes beyond ASCII: each UTF-8 byte is its own id here (no merges apply).
  EXPECT_EQ(t.encode("\xC3\xA9"), (Ids{0xC3, 0xA9}));
  EXPECT_EQ(t.encode(""), Ids{});
}

TEST(BpeTokenizer, RefusesWhatItCannotRead) {
  EXPECT_NE(bad_input([] { BpeTokenizer::from_json_text("[]", "x.json"); }).find("x.json is not a JSON object"),
            std::string::npos);
  EXPECT_NE(bad_input([] { BpeTokenizer::from_json_text(R"({"model":{"type":"Unigram"}})", "u.json"); })
                .find("expected a BPE model"),
            std::string::npos);
  const std::string odd = R"({"model":{"type":"BPE","vocab":{"a":0},"merges":[]},
      "pre_tokenizer":{"type":"Split","pattern":{"Regex":"\\w+"}}})";
  EXPECT_NE(bad_input([&] { BpeTokenizer::from_json_text(odd, "o.json"); })
                .find("unsupported pre-tokenizer split pattern '\\w+'"),
            std::string::npos);
  // Ids the decode table could not hold, and ids beyond the model's vocabulary.
  const std::string huge = R"({"model":{"type":"BPE","vocab":{"a":2000000000},"merges":[]},
      "pre_tokenizer":{"type":"ByteLevel"}})";
  EXPECT_NE(bad_input([&] { BpeTokenizer::from_json_text(huge, "h.json"); }).find("token 'a' has no id"),
            std::string::npos);
  EXPECT_NE(bad_input([] { Tokenizer::bpe(kDir + "/tokenizer/tokenizer.json", 256); })
                .find("ids up to 265, beyond the model's vocabulary of 256"),
            std::string::npos);
  EXPECT_NE(bad_input([] { Tokenizer::open("/nonexistent/tok"); })
                .find("'/nonexistent/tok' is neither a directory nor a file"),
            std::string::npos);
}

// load's --tokenizer DIR and serve's checkpoint directory open the same file the same way.
TEST(Tokenizer, OpensTheDirectoryAsServeAndLoadDo) {
  const Tokenizer t = Tokenizer::open(kDir + "/tokenizer");
  EXPECT_EQ(t.kind(), Tokenizer::Kind::kBpe);
  EXPECT_EQ(t.encode("the server"), (Ids{116, 257, 264, 118, 260}));
  EXPECT_NE(t.name().find("tokenizer.json BPE (266 entries)"), std::string::npos) << t.name();
  EXPECT_EQ(Tokenizer::file_in(kDir + "/tokenizer"), kDir + "/tokenizer/tokenizer.json");
  EXPECT_EQ(Tokenizer::from_file(Tokenizer::file_in(kDir + "/tokenizer"), 266).encode("the<|end|>"),
            (Ids{116, 257, 265}));
}

// A directory with both files: tokenizer.json is preferred (serve's checkpoint rule and load's
// --tokenizer rule are the one Tokenizer::file_in), so a tokenizer.model beside it is not read.
TEST(Tokenizer, PrefersTokenizerJsonOverTokenizerModel) {
  const std::filesystem::path dir = std::filesystem::path(LLMBENCH_TEST_SCRATCH) / "text_both_files";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kDir + "/tokenizer/tokenizer.json", dir / "tokenizer.json",
                             std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir / "tokenizer.model") << "not a SentencePiece model";
  EXPECT_EQ(Tokenizer::file_in(dir.string()), (dir / "tokenizer.json").string());
  const Tokenizer t = Tokenizer::open(dir.string(), 266);
  EXPECT_EQ(t.kind(), Tokenizer::Kind::kBpe);
  EXPECT_EQ(t.encode("the server"), (Ids{116, 257, 264, 118, 260}));
  std::filesystem::remove(dir / "tokenizer.json");
  EXPECT_EQ(Tokenizer::file_in(dir.string()), (dir / "tokenizer.model").string());
  EXPECT_NE(bad_input([&] { Tokenizer::open(dir.string()); }).find("tokenizer.model"), std::string::npos);
  std::filesystem::remove(dir / "tokenizer.model");
  EXPECT_EQ(Tokenizer::file_in(dir.string()), "");
  EXPECT_NE(bad_input([&] { Tokenizer::open(dir.string()); }).find("has no tokenizer.json or tokenizer.model"),
            std::string::npos);
}

// Decoding inverts the byte map: a merged token is the bytes of its parts, an added token its
// content; the added token is a special id for chat templates.
TEST(BpeTokenizer, DecodesTokensToTheirBytes) {
  const BpeTokenizer& t = fixture_bpe();
  ASSERT_NE(t.token_bytes(258), nullptr);
  EXPECT_EQ(*t.token_bytes(258), " the");   // "Ġthe"
  EXPECT_EQ(*t.token_bytes(32), " ");       // "Ġ"
  EXPECT_EQ(*t.token_bytes(10), "\n");      // "Ċ"
  EXPECT_EQ(*t.token_bytes(0xC3), "\xC3");  // a lone UTF-8 lead byte
  EXPECT_EQ(*t.token_bytes(265), "<|end|>");
  EXPECT_TRUE(t.is_added(265));
  EXPECT_FALSE(t.is_added(258));
  EXPECT_EQ(t.token_bytes(266), nullptr);
  EXPECT_EQ(t.token_bytes(-1), nullptr);
  EXPECT_EQ(t.added_id("<|end|>"), 265);
  EXPECT_EQ(t.added_id("<|none|>"), std::nullopt);
  const Tokenizer whole = Tokenizer::bpe(kDir + "/tokenizer/tokenizer.json");
  for (const std::string text : {"the server", "Hello  world\n", "it's in", "caf\xC3\xA9 \xE6\x97\xA5",
                                 "the<|end|>the"})
    EXPECT_EQ(whole.decode(whole.encode(text)), text);
  EXPECT_EQ(whole.special_id("<|end|>"), 265);
  EXPECT_EQ(whole.decode({116, 9999}), "t<9999>");
}

}  // namespace
}  // namespace llmbench
