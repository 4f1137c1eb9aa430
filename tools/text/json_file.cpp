// Reading a checkpoint's JSON files (see json_file.h).
#include "tools/text/json_file.h"

#include <fstream>
#include <iterator>
#include <string>

#include "engine/checkpoint/json_input.h"
#include "kernels/common/error.h"

namespace llmbench {

std::optional<nlohmann::json> read_json_object(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  const std::string text(std::istreambuf_iterator<char>(in), {});
  auto parsed = parse_json(text);
  if (!parsed.ok()) throw BadInput("'" + file.string() + "': not valid JSON (" + parsed.error + ")");
  if (!parsed.value.is_object()) throw BadInput("'" + file.string() + "': expected a JSON object");
  return std::move(parsed.value);
}

}  // namespace llmbench
