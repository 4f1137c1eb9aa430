// A checkpoint's small JSON files (tokenizer_config.json, generation_config.json, config.json)
// as tools/text reads them: the top-level object, or nothing when the file is absent.
#pragma once
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

namespace llmbench {

// nullopt when `file` cannot be opened; BadInput "'FILE': not valid JSON (reason)" or
// "'FILE': expected a JSON object" otherwise.
std::optional<nlohmann::json> read_json_object(const std::filesystem::path& file);

}  // namespace llmbench
