// "Did you mean ...?" for mistyped subcommands and flags: the nearest known word by edit
// distance (insertions, deletions, substitutions and swaps of two neighbours each cost 1), and
// the checks main.cpp runs before and after CLI11 parses, so `llmbench runn` and
// `llmbench run --bach 16` get one line naming the word and its likely correction.
// Not the parsing itself (CLI11) and not the exit codes (main.cpp).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace llmbench {

// Optimal string alignment distance between a and b.
int edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, when it is close enough to be a typo: distance at most
// (size + 1) / 3, at least 1 and at most 3 ("sever" may be "serve"; "xy" is nothing). Ties
// go to the earlier candidate.
std::optional<std::string> nearest_word(std::string_view word,
                                        const std::vector<std::string>& candidates);

// The error for argv[1] when it is neither a subcommand nor a flag of `app`: "unknown
// subcommand 'runn' (did you mean 'run'?) ...". nullopt when argv[1] is fine.
std::optional<std::string> unknown_subcommand_error(const CLI::App& app,
                                                    const std::vector<std::string>& args);

// After a parse error of `app`: the first argument that looks like a flag ("--bach",
// "--bach=16") and is an option of neither the root nor the subcommands chosen, as "run:
// unknown flag '--bach' (did you mean --batch?); ...". nullopt when no subcommand was chosen or
// every flag-like argument is known (the error is another one).
std::optional<std::string> unknown_flag_error(const CLI::App& app,
                                              const std::vector<std::string>& args);

}  // namespace llmbench
