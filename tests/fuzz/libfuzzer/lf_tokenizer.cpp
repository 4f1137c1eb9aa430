// Coverage-guided fuzzing of the byte-level BPE tokenizer (tools/text/tokenizer_bpe.h) on the
// text a client sends to `serve`: each pre-tokenizer pattern (GPT-2, Llama 3, Qwen2) must cut
// any bytes, valid UTF-8 or not, into pieces that put back together are the text, and encoding
// with a real tokenizer.json (tests/fixtures/load/tokenizer) must give known ids whose bytes
// are the text again. scripts/libfuzzer.sh builds and runs it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tools/text/tokenizer_bpe.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const llmbench::BpeTokenizer tok = llmbench::BpeTokenizer::from_file(
      LLMBENCH_SOURCE_DIR "/tests/fixtures/load/tokenizer/tokenizer.json");
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const auto style : {llmbench::BpeSplit::kGpt2, llmbench::BpeSplit::kLlama3,
                           llmbench::BpeSplit::kQwen2}) {
    std::string joined;
    for (const std::string& piece : llmbench::BpeTokenizer::pre_split(text, style)) {
      if (piece.empty()) std::abort();
      joined += piece;
    }
    if (joined != text) std::abort();  // the split lost, added or moved bytes
  }
  std::string back;
  for (const std::int32_t id : tok.encode(text)) {
    const std::string* bytes = tok.token_bytes(id);
    if (bytes == nullptr || std::size_t(id) >= tok.id_limit()) std::abort();
    back += *bytes;
  }
  if (back != text) std::abort();  // byte-level BPE is lossless
  return 0;
}
