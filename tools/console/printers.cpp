// Tabular printers (see printers.h).
#include "tools/console/printers.h"

#include <algorithm>

namespace llmbench {

namespace {

// Numbers align right, text left.
bool looks_numeric(const std::string& s) {
  if (s.empty()) return false;
  if (s == "n/a") return true;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e';
  });
}

}  // namespace

void print_table(std::ostream& out, const Row& header, const std::vector<Row>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  auto line = [&](const Row& r) {
    std::string text;
    for (std::size_t i = 0; i < width.size(); ++i) {
      const std::string& cell = i < r.size() ? r[i] : std::string();
      const std::string pad(width[i] - cell.size(), ' ');
      if (i) text += "  ";
      text += looks_numeric(cell) ? pad + cell : cell + pad;
    }
    // No trailing blanks: a left-aligned last column is not padded out.
    text.erase(text.find_last_not_of(' ') + 1);
    out << text << "\n";
  };
  line(header);
  Row rule;
  for (auto w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& r : rows) line(r);
}

void print_markdown(std::ostream& out, const Row& header, const std::vector<Row>& rows) {
  auto line = [&](const Row& r) {
    out << "|";
    for (const auto& c : r) out << " " << c << " |";
    out << "\n";
  };
  line(header);
  out << "|";
  for (const auto& h : header) out << (looks_numeric(h) ? " ---: |" : " --- |");
  out << "\n";
  for (const auto& r : rows) line(r);
}

void print_csv(std::ostream& out, const Row& header, const std::vector<Row>& rows) {
  auto cell = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  auto line = [&](const Row& r) {
    for (std::size_t i = 0; i < r.size(); ++i) out << (i ? "," : "") << cell(r[i]);
    out << "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
}

void print_rows(std::ostream& out, const std::string& format, const Row& header,
                const std::vector<Row>& rows) {
  if (format == "md")
    print_markdown(out, header, rows);
  else if (format == "csv")
    print_csv(out, header, rows);
  else
    print_table(out, header, rows);
}

bool is_output_format(const std::string& f) {
  return f == "table" || f == "wide" || f == "md" || f == "csv" || f == "json";
}

}  // namespace llmbench
