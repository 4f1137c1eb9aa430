// Typo suggestions for subcommands and flags (see suggest.h).
#include "tools/cli/suggest.h"

#include <CLI/CLI.hpp>

#include <algorithm>

#include "tools/cli/peer_flags.h"

namespace llmbench {

int edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = int(i);
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = int(j);
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);  // two neighbours swapped
    }
  return d[n][m];
}

std::optional<std::string> nearest_word(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  const int limit = std::clamp((int(word.size()) + 1) / 3, 1, 3);
  std::optional<std::string> best;
  int best_d = limit + 1;
  for (const std::string& c : candidates) {
    const int d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

namespace {

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(s->get_name());
  return names;
}

// "--name" for every long name of `app`'s options, "-x" for short ones.
void add_flag_names(const CLI::App& app, std::vector<std::string>& names) {
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
}

}  // namespace

std::optional<std::string> unknown_subcommand_error(const CLI::App& app,
                                                    const std::vector<std::string>& args) {
  if (args.size() < 2 || args[1].empty() || args[1][0] == '-') return std::nullopt;
  const std::vector<std::string> names = subcommand_names(app);
  if (std::find(names.begin(), names.end(), args[1]) != names.end()) return std::nullopt;
  std::string msg = "unknown subcommand '" + args[1] + "'";
  if (auto near = nearest_word(args[1], names)) msg += " (did you mean '" + *near + "'?)";
  return msg + "; `llmbench --help` lists the subcommands";
}

std::optional<std::string> unknown_flag_error(const CLI::App& app,
                                              const std::vector<std::string>& args) {
  // The flags of the root and of every subcommand parsed (`import nsys` nests two).
  std::vector<std::string> names;
  std::string path;
  const CLI::App* cur = &app;
  while (cur) {
    add_flag_names(*cur, names);
    const auto chosen = cur->get_subcommands();
    cur = chosen.empty() ? nullptr : chosen.front();
    if (cur) path += (path.empty() ? "" : " ") + cur->get_name();
  }
  if (path.empty()) return std::nullopt;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;  // everything after it is a value
    if (a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9') || a[1] == '.') continue;
    const std::string flag = a.substr(0, a.find('='));
    // A cluster of short flags ("-qv") or a short flag with its value ("-o5") is CLI11's.
    if (flag[1] != '-' && flag.size() > 2) continue;
    if (std::find(names.begin(), names.end(), flag) != names.end()) continue;
    std::string msg = path + ": unknown flag '" + flag + "'";
    if (auto hint = peer_flag_hint(path, flag))
      msg += " (" + *hint + ")";
    else if (auto near = nearest_word(flag, names))
      msg += " (did you mean " + *near + "?)";
    return msg + "; `llmbench " + path + " --help` lists the flags";
  }
  return std::nullopt;
}

}  // namespace llmbench
