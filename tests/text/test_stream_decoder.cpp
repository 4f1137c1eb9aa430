// The streaming decoder (tools/text/stream_decoder.h): characters whose bytes are spread over
// tokens ("é", "日本", an emoji) arrive whole, in the chunk of the token that completes them;
// every chunk is valid UTF-8; bytes that no token completes become the tokenizer's
// replacement; the chunks join into the whole decode. With the small BPE of
// tests/text/small_bpe.h (written by the test) and the byte-level mapping.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/text/small_bpe.h"
#include "tools/text/stream_decoder.h"
#include "tools/text/tokenizer.h"
#include "tools/text/utf8.h"

namespace llmbench {
namespace {

using Ids = std::vector<std::int32_t>;
using Chunks = std::vector<std::string>;
using llmbench_test::small_bpe_byte_id;

const Tokenizer& small_bpe() {
  static const Tokenizer t = Tokenizer::bpe(
      llmbench_test::write_small_bpe(std::string(LLMBENCH_TEST_SCRATCH) + "/text_small_bpe"), 256);
  return t;
}

// The chunks a stream of `ids` is sent as: one per token, the last with what finish() returns.
Chunks stream(const Tokenizer& t, const Ids& ids) {
  StreamDecoder d(t);
  Chunks out;
  for (auto id : ids) out.push_back(d.push(id));
  if (!out.empty()) out.back() += d.finish();
  return out;
}

bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    if (utf8_head(std::string_view(s).substr(i), len) != Utf8Head::kComplete) return false;
    i += len;
  }
  return true;
}

const std::string kE = "\xC3\xA9", kNichi = "\xE6\x97\xA5", kHon = "\xE6\x9C\xAC",
                  kSmile = "\xF0\x9F\x98\x80", kFffd = "\xEF\xBF\xBD";

Ids byte_ids(const std::string& s) {
  Ids ids;
  for (unsigned char b : s) ids.push_back(small_bpe_byte_id(b));
  return ids;
}

TEST(Utf8, ClassifiesSequenceHeads) {
  std::size_t len = 0;
  EXPECT_EQ(utf8_head("a", len), Utf8Head::kComplete);
  EXPECT_EQ(len, 1u);
  EXPECT_EQ(utf8_head(kSmile, len), Utf8Head::kComplete);
  EXPECT_EQ(len, 4u);
  EXPECT_EQ(utf8_head("\xE6\x97", len), Utf8Head::kIncomplete);
  EXPECT_EQ(len, 2u);
  for (const char* bad : {"\x80", "\xC0\x80", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                          "\xF5", "\xC3\x41"}) {
    EXPECT_EQ(utf8_head(bad, len), Utf8Head::kInvalid) << bad;
    EXPECT_EQ(len, 1u);
  }
}

TEST(StreamDecoder, MultiByteCharactersSplitAcrossTokensArriveWhole) {
  const Tokenizer& t = small_bpe();
  // "日本": six byte tokens (no merges); each character leaves with its third byte.
  const Ids nihon = t.encode(kNichi + kHon);
  EXPECT_EQ(nihon, byte_ids(kNichi + kHon));
  EXPECT_EQ(stream(t, nihon), (Chunks{"", "", kNichi, "", "", kHon}));
  // An emoji: four byte tokens.
  EXPECT_EQ(stream(t, t.encode(kSmile)), (Chunks{"", "", "", kSmile}));
  // "é" is one merged token; written as its two byte tokens it still arrives whole.
  EXPECT_EQ(t.encode(kE), (Ids{215}));
  EXPECT_EQ(stream(t, {215}), (Chunks{kE}));
  EXPECT_EQ(stream(t, byte_ids(kE)), (Chunks{"", kE}));
  // Mixed with ASCII tokens, as a model writes them.
  const std::string text = "the caf" + kE + " " + kNichi + kHon + " " + kSmile + "!";
  const Ids ids = t.encode(text);
  const Chunks chunks = stream(t, ids);
  std::string joined;
  for (const std::string& c : chunks) {
    EXPECT_TRUE(valid_utf8(c)) << c;
    joined += c;
  }
  EXPECT_EQ(joined, text);
  EXPECT_EQ(t.decode(ids), text);
}

TEST(StreamDecoder, BytesNoTokenCompletesAreReplaced) {
  const Tokenizer& t = small_bpe();
  const int c3 = small_bpe_byte_id(0xC3), e6 = small_bpe_byte_id(0xE6),
            x97 = small_bpe_byte_id(0x97), a9 = small_bpe_byte_id(0xA9);
  // A lead byte followed by ASCII: the lead byte is replaced when the ASCII arrives.
  EXPECT_EQ(stream(t, {c3, small_bpe_byte_id('a')}), (Chunks{"", kFffd + "a"}));
  // A stray continuation byte is replaced at once.
  EXPECT_EQ(stream(t, {a9, small_bpe_byte_id('b')}), (Chunks{kFffd, "b"}));
  // Still incomplete at the end of the stream: finish() replaces it.
  StreamDecoder d(t);
  EXPECT_EQ(d.push(e6), "");
  EXPECT_EQ(d.push(x97), "");
  EXPECT_EQ(d.held_bytes(), 2u);
  EXPECT_EQ(d.finish(), kFffd);
  EXPECT_EQ(d.held_bytes(), 0u);
  // An added token ends what it interrupts; an id the file lacks is written "<id>".
  EXPECT_EQ(stream(t, {e6, llmbench_test::kSmallBpeImEnd}), (Chunks{"", kFffd + "<|im_end|>"}));
  EXPECT_EQ(stream(t, {240}), (Chunks{"<240>"}));
  EXPECT_EQ(t.decode({e6, x97}), kFffd);
}

// The byte-level mapping of the random-weight presets: ids 128..255 are bytes joined into
// characters as well; a byte that cannot be part of UTF-8, and any id without a byte, is
// written "<id>" so the text still says which ids were generated.
TEST(StreamDecoder, ByteMappingJoinsBytesAndNamesTheRest) {
  const Tokenizer t(256);
  const Ids ids = t.encode("a" + kNichi + kSmile);
  EXPECT_EQ(ids, (Ids{97, 0xE6, 0x97, 0xA5, 0xF0, 0x9F, 0x98, 0x80}));
  EXPECT_EQ(stream(t, ids), (Chunks{"a", "", "", kNichi, "", "", "", kSmile}));
  EXPECT_EQ(stream(t, {0x80, 0xC3, 'x', 0, 4711}), (Chunks{"<128>", "", "<195>x", "<0>", "<4711>"}));
  EXPECT_EQ(stream(t, {0xE6, 0x97}), (Chunks{"", "<230><151>"}));
  EXPECT_EQ(t.decode({72, 105, 10, 0xC3, 0xA9, 0, 4711}), "Hi\n" + kE + "<0><4711>");
}

}  // namespace
}  // namespace llmbench
