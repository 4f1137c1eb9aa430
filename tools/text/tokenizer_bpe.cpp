// Byte-level BPE from tokenizer.json (see tokenizer_bpe.h).
#include "tools/text/tokenizer_bpe.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <fstream>
#include <limits>
#include <iterator>

#include "kernels/common/error.h"
#include "engine/checkpoint/json_describe.h"
#include "engine/checkpoint/json_input.h"
#include "tools/text/utf8.h"

namespace llmbench {

namespace {

using json = nlohmann::json;

// The three split patterns, as they appear in tokenizer.json files.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// ---- code point classes --------------------------------------------------------------------

bool is_space(char32_t c) {
  return (c >= 9 && c <= 13) || c == 32 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

bool is_number(char32_t c) {
  return (c >= '0' && c <= '9') || c == 0xB2 || c == 0xB3 || c == 0xB9 ||
         (c >= 0xBC && c <= 0xBE) || (c >= 0x660 && c <= 0x669) || (c >= 0x6F0 && c <= 0x6F9) ||
         (c >= 0x966 && c <= 0x96F) || (c >= 0x2070 && c <= 0x2079) ||
         (c >= 0x2080 && c <= 0x2089) || (c >= 0x2150 && c <= 0x2189) ||
         (c >= 0x2460 && c <= 0x249B) || (c >= 0xFF10 && c <= 0xFF19);
}

// Punctuation and symbol blocks (not letters) beyond ASCII.
bool is_other_non_ascii(char32_t c) {
  return (c >= 0xA1 && c <= 0xBF && c != 0xAA && c != 0xB5 && c != 0xBA) || c == 0xD7 ||
         c == 0xF7 || (c >= 0x2010 && c <= 0x206F) || (c >= 0x20A0 && c <= 0x20CF) ||
         (c >= 0x2100 && c <= 0x214F) || (c >= 0x2190 && c <= 0x2BFF) ||
         (c >= 0x3001 && c <= 0x303F) || (c >= 0xFE30 && c <= 0xFE4F) ||
         (c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) ||
         (c >= 0x1F000 && c <= 0x1FAFF) || (c >= 0xDC80 && c <= 0xDCFF);
}

bool is_letter(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  return !is_space(c) && !is_number(c) && !is_other_non_ascii(c) && c >= 0xAA;
}

bool is_newline(char32_t c) { return c == '\r' || c == '\n'; }
bool is_other(char32_t c) { return !is_space(c) && !is_letter(c) && !is_number(c); }

// ---- the split patterns, alternative by alternative -----------------------------------------

class Splitter {
 public:
  Splitter(const std::vector<CodePoint>& cps, BpeSplit style) : cp_(cps), style_(style) {}

  // The length in code points of the match at i (always >= 1 while i < n).
  std::size_t match(std::size_t i) const {
    if (std::size_t k = contraction(i)) return k;
    if (style_ == BpeSplit::kGpt2) {
      if (std::size_t k = run_after_space(i, is_letter)) return k;
      if (std::size_t k = run_after_space(i, is_number)) return k;
      if (std::size_t k = run_after_space(i, is_other)) return k;
    } else {
      if (std::size_t k = letters_after_any(i)) return k;
      if (is_number(at(i))) return run(i, is_number, style_ == BpeSplit::kLlama3 ? 3 : 1) - i;
      if (std::size_t k = run_after_space(i, is_other)) return run(i + k, is_newline) - i;
      if (std::size_t k = spaces_to_newline(i)) return k;
    }
    return spaces(i);
  }

 private:
  char32_t at(std::size_t i) const { return i < cp_.size() ? cp_[i].c : 0; }
  bool has(std::size_t i) const { return i < cp_.size(); }

  // The end of the run of `pred` from i, at most `max` long.
  template <class Pred>
  std::size_t run(std::size_t i, Pred pred,
                  std::size_t max = std::numeric_limits<std::size_t>::max()) const {
    std::size_t j = i;
    while (has(j) && j - i < max && pred(at(j))) ++j;
    return j;
  }

  // 's 't 're 've 'm 'll 'd (case-insensitive for Llama 3 and Qwen2).
  std::size_t contraction(std::size_t i) const {
    if (at(i) != '\'') return 0;
    auto low = [&](std::size_t k) {
      const char32_t c = at(k);
      return style_ != BpeSplit::kGpt2 && c >= 'A' && c <= 'Z' ? char32_t(c + 32) : c;
    };
    const char32_t a = low(i + 1), b = low(i + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    return 0;
  }

  // " ?X+": an optional space, then at least one X.
  template <class Pred>
  std::size_t run_after_space(std::size_t i, Pred pred) const {
    const std::size_t from = at(i) == ' ' ? i + 1 : i;
    const std::size_t j = run(from, pred);
    return j > from ? j - i : 0;
  }

  // "[^\r\n\p{L}\p{N}]?\p{L}+"
  std::size_t letters_after_any(std::size_t i) const {
    std::size_t from = i;
    if (!is_letter(at(i))) {
      const char32_t c = at(i);
      if (!has(i) || is_newline(c) || is_number(c) || !is_letter(at(i + 1))) return 0;
      from = i + 1;
    }
    return run(from, is_letter) - i;
  }

  // "\s*[\r\n]+": whitespace up to and including its last newline.
  std::size_t spaces_to_newline(std::size_t i) const {
    const std::size_t j = run(i, is_space);
    for (std::size_t k = j; k > i; --k)
      if (is_newline(at(k - 1))) return k - i;
    return 0;
  }

  // "\s+(?!\S)|\s+": a run of whitespace, less its last character when a non-space follows
  // (that one goes with the next word), unless it is the only one.
  std::size_t spaces(std::size_t i) const {
    const std::size_t j = run(i, is_space);
    if (j == i) return 1;  // unreachable for valid classes; never loop forever
    if (has(j) && j - i >= 2) return j - 1 - i;
    return j - i;
  }

  const std::vector<CodePoint>& cp_;
  BpeSplit style_;
};

// The split pattern of a pre_tokenizer object (ByteLevel, Split or a Sequence of them).
void read_pre_tokenizer(const json& p, const std::string& what, BpeSplit& split, bool& found,
                        bool& prefix_space) {
  const std::string type = p.value("type", "");
  if (type == "Sequence") {
    for (const json& q : p.value("pretokenizers", json::array()))
      read_pre_tokenizer(q, what, split, found, prefix_space);
  } else if (type == "ByteLevel") {
    prefix_space = p.value("add_prefix_space", false);
    if (p.value("use_regex", true)) {
      split = BpeSplit::kGpt2;
      found = true;
    }
  } else if (type == "Split") {
    const json pat = p.value("pattern", json::object());
    const std::string re = pat.is_object() ? pat.value("Regex", "") : "";
    if (re == kGpt2Pattern) split = BpeSplit::kGpt2;
    else if (re == kLlama3Pattern) split = BpeSplit::kLlama3;
    else if (re == kQwen2Pattern) split = BpeSplit::kQwen2;
    else
      throw BadInput(what + ": unsupported pre-tokenizer split pattern '" +
                     (re.empty() ? pat.dump() : re) +
                     "' (understood: GPT-2's, Llama 3's and Qwen2's byte-level patterns)");
    found = true;
  } else {
    throw BadInput(what + ": unsupported pre-tokenizer type '" + type +
                   "' (expected ByteLevel, Split or a Sequence of them)");
  }
}

// A token id from the file: an integer in [0, kMaxBpeId) (the largest vocabularies in use
// hold about 260,000 ids; the decode table is indexed by id).
std::int32_t checked_id(const json& id, const std::string& what, const std::string& piece) {
  constexpr std::int64_t kMaxBpeId = std::int64_t(1) << 24;
  if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() >= kMaxBpeId)
    throw BadInput(what + ": token '" + piece + "' has no id in [0, " + std::to_string(kMaxBpeId) +
                   ") (found " + describe_json(id) + ")");
  return std::int32_t(id.get<std::int64_t>());
}

}  // namespace

const std::string& BpeTokenizer::byte_char(unsigned char b) {
  static const std::array<std::string, 256> kMap = [] {
    std::array<std::string, 256> m;
    int extra = 0;
    for (int x = 0; x < 256; ++x) {
      const bool self = (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE);
      const char32_t c = self ? char32_t(x) : char32_t(256 + extra++);
      std::string u;
      if (c < 0x80) {
        u += char(c);
      } else {  // below U+0800: two bytes
        u += char(0xC0 | (c >> 6));
        u += char(0x80 | (c & 0x3F));
      }
      m[std::size_t(x)] = u;
    }
    return m;
  }();
  return kMap[b];
}

std::vector<std::string> BpeTokenizer::pre_split(std::string_view text, BpeSplit style) {
  const std::vector<CodePoint> cps = code_points(text);
  const Splitter s(cps, style);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < cps.size();) {
    const std::size_t k = std::max<std::size_t>(1, s.match(i));
    const std::size_t end = std::min(i + k, cps.size());
    const std::size_t from = cps[i].at, to = cps[end - 1].at + cps[end - 1].len;
    out.emplace_back(text.substr(from, to - from));
    i = end;
  }
  return out;
}

BpeTokenizer BpeTokenizer::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput("'" + path + "': cannot be read");
  return from_json_text(std::string(std::istreambuf_iterator<char>(in), {}), path);
}

BpeTokenizer BpeTokenizer::from_json_text(const std::string& text, const std::string& what) {
  try {
    return from_json_unchecked(text, what);
  } catch (const json::exception& e) {
    // A field of an unexpected type deeper in the file (nlohmann's type errors name it).
    std::string why = e.what();
    if (why.size() > 160) why = why.substr(0, 157) + "...";
    throw BadInput(what + ": a field has an unexpected type (" + why + ")");
  }
}

BpeTokenizer BpeTokenizer::from_json_unchecked(const std::string& text, const std::string& what) {
  auto parsed = parse_json(text);
  if (!parsed.ok()) throw BadInput(what + ": not valid JSON (" + parsed.error + ")");
  const json j = std::move(parsed.value);
  if (!j.is_object()) throw BadInput(what + " is not a JSON object");
  if (!j.contains("model") || !j["model"].is_object())
    throw BadInput(what + ": field \"model\" must be an object (a BPE model), "
                   "found " + (j.contains("model") ? describe_json(j["model"]) : "none"));
  const json& model = j["model"];
  if (!model.contains("type") || !model["type"].is_string() || model["type"] != "BPE" || !model.contains("vocab") || !model["vocab"].is_object() ||
      !model.contains("merges") || !model["merges"].is_array())
    throw BadInput(what + ": expected a BPE model (model.type \"BPE\" with "
                   "vocab and merges)");
  BpeTokenizer t;
  for (const auto& [piece, id] : model["vocab"].items()) {
    t.vocab_[piece] = checked_id(id, what, piece);
  }
  int rank = 0;
  for (const json& m : model["merges"]) {
    std::pair<std::string, std::string> pair;
    if (m.is_string()) {  // "a b"
      const std::string s = m.get<std::string>();
      const auto sp = s.find(' ');
      if (sp == std::string::npos)
        throw BadInput(what + ": merge '" + s + "' is not two symbols");
      pair = {s.substr(0, sp), s.substr(sp + 1)};
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      pair = {m[0].get<std::string>(), m[1].get<std::string>()};
    } else {
      throw BadInput(what + ": merge " + describe_json(m) + " is not two symbols");
    }
    t.ranks_.emplace(std::move(pair), rank++);
  }
  t.ignore_merges_ = model.value("ignore_merges", false);
  if (model.contains("unk_token") && model["unk_token"].is_string()) {
    const auto u = t.vocab_.find(model["unk_token"].get<std::string>());
    if (u != t.vocab_.end()) t.unk_id_ = u->second;
  }
  bool found = false;
  if (j.contains("pre_tokenizer") && j["pre_tokenizer"].is_object())
    read_pre_tokenizer(j["pre_tokenizer"], what, t.split_, found, t.add_prefix_space_);
  if (!found)
    throw BadInput(what + ": no byte-level pre-tokenizer (expected ByteLevel "
                   "or a Split with a byte-level pattern)");
  for (const json& a : j.value("added_tokens", json::array()))
    if (a.is_object() && a.contains("content") && a["content"].is_string() && a.contains("id"))
      t.added_.emplace_back(a["content"].get<std::string>(),
                            checked_id(a["id"], what, a["content"].get<std::string>()));
  std::sort(t.added_.begin(), t.added_.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  t.build_decode_table();
  return t;
}

void BpeTokenizer::build_decode_table() {
  std::int32_t top = -1;
  for (const auto& [piece, id] : vocab_) top = std::max(top, id);
  for (const auto& [content, id] : added_) top = std::max(top, id);
  bytes_.assign(std::size_t(top + 1), std::string());
  known_.assign(std::size_t(top + 1), 0);
  // GPT-2's unicode-to-byte map, the inverse of byte_char; a character outside it (a vocab
  // entry that is not byte-level, such as "<unk>") stands for its own UTF-8 bytes, as the
  // ByteLevel decoder of Hugging Face tokenizers does.
  std::unordered_map<char32_t, char> to_byte;
  for (int b = 0; b < 256; ++b) to_byte[code_points(byte_char(static_cast<unsigned char>(b)))[0].c] = char(b);
  for (const auto& [piece, id] : vocab_) {
    std::string raw;
    for (const CodePoint& cp : code_points(piece)) {
      const auto it = to_byte.find(cp.c);
      if (it != to_byte.end()) raw += it->second;
      else raw.append(piece, cp.at, cp.len);
    }
    bytes_[std::size_t(id)] = std::move(raw);
    known_[std::size_t(id)] = 1;
  }
  for (const auto& [content, id] : added_) {  // written as their text, never byte-mapped
    bytes_[std::size_t(id)] = content;
    known_[std::size_t(id)] = 2;
  }
}

const std::string* BpeTokenizer::token_bytes(std::int32_t id) const {
  if (id < 0 || std::size_t(id) >= known_.size() || !known_[std::size_t(id)]) return nullptr;
  return &bytes_[std::size_t(id)];
}

bool BpeTokenizer::is_added(std::int32_t id) const {
  return id >= 0 && std::size_t(id) < known_.size() && known_[std::size_t(id)] == 2;
}

std::optional<std::int32_t> BpeTokenizer::added_id(std::string_view content) const {
  for (const auto& [text, id] : added_)
    if (text == content) return id;
  return std::nullopt;
}

void BpeTokenizer::encode_piece(const std::string& piece, std::vector<std::int32_t>& out) const {
  std::vector<std::string> sym;
  std::string whole;
  for (unsigned char b : piece) {
    sym.push_back(byte_char(b));
    whole += sym.back();
  }
  if (ignore_merges_) {
    if (auto w = vocab_.find(whole); w != vocab_.end()) {
      out.push_back(w->second);
      return;
    }
  }
  while (sym.size() > 1) {
    int best = std::numeric_limits<int>::max();
    std::size_t best_at = 0;
    for (std::size_t i = 0; i + 1 < sym.size(); ++i) {
      const auto r = ranks_.find({sym[i], sym[i + 1]});
      if (r != ranks_.end() && r->second < best) best = r->second, best_at = i;
    }
    if (best == std::numeric_limits<int>::max()) break;
    const std::string a = sym[best_at], b = sym[best_at + 1];
    std::vector<std::string> merged;
    for (std::size_t i = 0; i < sym.size(); ++i) {
      if (i + 1 < sym.size() && sym[i] == a && sym[i + 1] == b) {
        merged.push_back(a + b);
        ++i;
      } else {
        merged.push_back(sym[i]);
      }
    }
    sym = std::move(merged);
  }
  for (const std::string& s : sym) {
    const auto v = vocab_.find(s);
    if (v != vocab_.end()) out.push_back(v->second);
    else if (unk_id_ >= 0) out.push_back(unk_id_);
    else throw BadInput("tokenizer: symbol '" + s + "' of '" + piece + "' is not in the vocabulary "
                        "and the model has no unk_token");
  }
}

std::vector<std::int32_t> BpeTokenizer::encode(std::string_view text) const {
  std::vector<std::int32_t> out;
  auto encode_plain = [&](std::string_view part, bool at_start) {
    std::string s(part);
    if (add_prefix_space_ && at_start && !s.empty() && s[0] != ' ') s.insert(s.begin(), ' ');
    for (const std::string& piece : pre_split(s, split_)) encode_piece(piece, out);
  };
  std::size_t from = 0;
  for (std::size_t i = 0; i < text.size();) {
    bool hit = false;
    for (const auto& [content, id] : added_) {
      if (!content.empty() && text.compare(i, content.size(), content) == 0) {
        encode_plain(text.substr(from, i - from), from == 0);
        out.push_back(id);
        i += content.size();
        from = i;
        hit = true;
        break;
      }
    }
    if (!hit) ++i;
  }
  encode_plain(text.substr(from), from == 0);
  return out;
}

}  // namespace llmbench
