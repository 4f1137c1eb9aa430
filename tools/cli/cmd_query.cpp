// `llmbench query DB NAME|FILE.sql [--param k=v ...] [--format ...]` and `llmbench query --list`:
// runs a bundled query (queries/*.sql, embedded in the binary) or the user's own SQL file on a
// database, read-only, with median/percentile/stdev available. Every input check is BadInput
// (exit 2) with one line naming what was wrong.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/checkpoint/input_file.h"
#include "kernels/common/error.h"
#include "tools/query/bundled_queries.h"
#include "tools/cli/commands.h"
#include "tools/console/printers.h"
#include "tools/report/query_output.h"
#include "tools/query/query_runner.h"

namespace llmbench {

namespace {

struct QueryOptions {
  std::string db;
  std::string query;  // a bundled name or a path to an .sql file
  std::vector<std::string> params;
  std::string format = "table";
  bool list = false;
};

int list_queries(const std::string& format) {
  if (format == "json") {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& q : bundled_queries()) {
      nlohmann::ordered_json params = nlohmann::ordered_json::array(), columns = params;
      for (const auto& p : q.header.params)
        params.push_back(
            {{"name", p.name}, {"default", p.default_sql}, {"description", p.description}});
      for (const auto& c : q.header.columns)
        columns.push_back({{"name", c.name}, {"meaning", c.meaning}});
      out.push_back({{"name", q.name}, {"purpose", q.header.purpose}, {"params", params},
                     {"columns", columns}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  if (format == "table") {
    // One query a block, within 120 columns: its name and parameters, then its purpose wrapped
    // and indented (the purposes run to several hundred characters).
    bool first = true;
    for (const auto& q : bundled_queries()) {
      std::string params;
      for (const auto& p : q.header.params)
        params += (params.empty() ? "" : " ") + p.name + "=" + p.default_sql;
      std::cout << (first ? "" : "\n") << q.name << (params.empty() ? "" : "  (" + params + ")")
                << "\n";
      first = false;
      std::string line = " ";
      std::istringstream words(q.header.purpose);
      for (std::string w; words >> w;) {
        if (line.size() + 1 + w.size() > 118 && line.size() > 1) {
          std::cout << line << "\n";
          line = " ";
        }
        line += " " + w;
      }
      if (line.size() > 1) std::cout << line << "\n";
    }
    return 0;
  }
  const Row header = {"name", "params", "purpose"};
  std::vector<Row> rows;
  for (const auto& q : bundled_queries()) {
    std::string params;
    for (const auto& p : q.header.params)
      params += (params.empty() ? "" : " ") + p.name + "=" + p.default_sql;
    rows.push_back({q.name, params.empty() ? "-" : params, q.header.purpose});
  }
  print_rows(std::cout, format, header, rows);
  return 0;
}

std::map<std::string, std::string> parse_params(const std::vector<std::string>& items) {
  std::map<std::string, std::string> params;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw BadInput("--param '" + item + "': expected key=value, e.g. --param case_id=3");
    auto [it, inserted] = params.emplace(item.substr(0, eq), item.substr(eq + 1));
    if (!inserted) throw BadInput("--param " + it->first + ": given more than once");
  }
  return params;
}

// Inline SQL (the argument holds whitespace and is not an existing file: "SELECT ..."), a file
// (a '/' in it, or ending in .sql), or else the name of a bundled query. All run read-only.
QuerySource resolve_query(const std::string& query) {
  std::error_code ec;
  const bool ends_sql = query.size() > 4 && query.compare(query.size() - 4, 4, ".sql") == 0;
  const bool exists = std::filesystem::exists(query, ec);
  const bool is_inline = !exists && !ends_sql && query.find_first_of(" \t\n") != std::string::npos;
  const bool is_file = !is_inline && (query.find('/') != std::string::npos || ends_sql || exists);
  if (is_inline) return {"inline SQL", query, parse_query_header(query, "inline SQL")};
  if (!is_file) {
    const BundledQuery* q = find_bundled_query(query);
    if (!q)
      throw BadInput("unknown query '" + query + "' (bundled: " + bundled_query_names() +
                     "; or give the path of an .sql file, or inline SQL such as \"SELECT ...\")");
    return {"query '" + q->name + "'", std::string(q->sql), q->header};
  }
  refuse_special_file(query, "query file");
  std::ifstream in(query, std::ios::binary);
  if (!in || std::filesystem::is_directory(query))
    throw BadInput("query file '" + query + "' cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  const std::string label = "file '" + query + "'";
  auto header = parse_query_header(text.str(), label);
  return {label, text.str(), std::move(header)};
}

int run_query_command(const QueryOptions& o) {
  if (o.list) return list_queries(o.format);
  if (o.db.empty())
    throw BadInput("query: expected a database and a query: llmbench query DB NAME|FILE.sql "
                   "(llmbench query --list shows the bundled queries)");
  if (o.query.empty())
    throw BadInput("query: expected a query after the database: one of " + bundled_query_names() +
                   ", or the path of an .sql file");
  const auto params = parse_params(o.params);
  const QuerySource source = resolve_query(o.query);
  auto db = open_query_db(o.db);
  const QueryResult result = run_query(*db, source, params);
  print_query_result(std::cout, o.format, result);
  return 0;
}

}  // namespace

void add_query_command(CLI::App& root, CommandContext& ctx) {
  auto o = std::make_shared<QueryOptions>();
  CLI::App* cmd = root.add_subcommand(
      "query", "Run a bundled query (see --list) or an .sql file on a result database");
  cmd->footer("Examples:\n  llmbench query --list\n  llmbench query llmbench.db case_summary\n  llmbench query llmbench.db top_ops --param phase=\"'decode'\" --format md\n  llmbench query llmbench.db \"SELECT model, batch, ttft_ms_p50 FROM bench_case\"");
  cmd->add_option("db", o->db, "SQLite database written by llmbench run (opened read-only)");
  cmd->add_option("query", o->query,
                  "A bundled query name, the path of an .sql file, or inline SQL (\"SELECT ...\")");
  // One key=value per --param, so that a value never swallows the positional arguments.
  cmd->add_option("--param", o->params, "key=value for the query's :key parameter (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--format", o->format, "table|md|csv|json")
      ->check(CLI::IsMember({"table", "md", "csv", "json"}))
      ->capture_default_str();
  cmd->add_flag("--list", o->list, "List the bundled queries with their parameters and purpose");
  cmd->callback([o, &ctx] { ctx.exit_code = run_query_command(*o); });
}

}  // namespace llmbench
