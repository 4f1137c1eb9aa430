// Parsing and checking of flag values, with errors that name the flag (BadInput, exit 2).
#pragma once
#include <string>
#include <vector>

namespace llmbench {

// "1,4,16" -> {1, 4, 16}. Every item must be an integer in [min, max]; the list non-empty.
std::vector<int> parse_int_list(const std::string& flag, const std::string& text, int min,
                                int max);
// A single integer in [min, max].
int parse_int(const std::string& flag, const std::string& text, int min, int max);
// "a,b" -> {"a", "b"}; empty items are an error.
std::vector<std::string> parse_word_list(const std::string& flag, const std::string& text);

}  // namespace llmbench
