// Reading a checkpoint's end-of-sequence ids (see end_of_sequence.h).
#include "tools/text/end_of_sequence.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

#include "kernels/common/error.h"
#include "tools/text/json_file.h"

namespace llmbench {

namespace {

// `eos_token_id` of a generation_config.json or config.json: absent or null, one id, or a list.
bool add_eos_ids(const nlohmann::json& config, const std::filesystem::path& file,
                 int vocab_size, std::vector<std::int32_t>& ids) {
  const auto it = config.find("eos_token_id");
  if (it == config.end() || it->is_null()) return false;
  const nlohmann::json list = it->is_array() ? *it : nlohmann::json::array({*it});
  for (const auto& v : list) {
    if (!v.is_number_integer())
      throw BadInput("'" + file.string() + "': eos_token_id must be a token id or a list of "
                     "token ids, not " + v.dump());
    const auto id = v.get<std::int64_t>();
    if (id < 0 || id >= vocab_size)
      throw BadInput("'" + file.string() + "': eos_token_id " + std::to_string(id) +
                     " is outside the model's vocabulary of " + std::to_string(vocab_size));
    ids.push_back(std::int32_t(id));
  }
  return true;
}

}  // namespace

std::vector<std::int32_t> end_of_sequence_ids(const std::string& dir, const Tokenizer& tokenizer,
                                              int vocab_size) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return {};
  const std::filesystem::path root(dir);
  std::vector<std::int32_t> ids;

  if (const auto tc = read_json_object(root / "tokenizer_config.json")) {
    const auto it = tc->find("eos_token");
    std::string text;
    if (it != tc->end() && it->is_string()) text = it->get<std::string>();
    if (it != tc->end() && it->is_object()) text = it->value("content", "");
    if (!text.empty())
      if (const auto id = tokenizer.special_id(text); id && *id < vocab_size) ids.push_back(*id);
  }
  const auto gen_file = root / "generation_config.json";
  const auto gen = read_json_object(gen_file);
  const bool from_generation = gen && add_eos_ids(*gen, gen_file, vocab_size, ids);
  if (!from_generation) {
    const auto config_file = root / "config.json";
    if (const auto config = read_json_object(config_file))
      add_eos_ids(*config, config_file, vocab_size, ids);
  }
  if (ids.empty() && tokenizer.is_sentencepiece())
    if (const auto id = tokenizer.special_id("</s>"); id && *id < vocab_size) ids.push_back(*id);

  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace llmbench
