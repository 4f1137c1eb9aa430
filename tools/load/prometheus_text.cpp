// The Prometheus text exposition format parser (see prometheus_text.h). One line at a time with
// a small cursor; every failure names the line and what was expected there.
#include "tools/load/prometheus_text.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace llmbench {

namespace {

// Thrown inside one line; caught per line.
struct LineError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool name_start(char c, bool colon_ok) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon_ok && c == ':');
}
bool name_char(char c, bool colon_ok) { return name_start(c, colon_ok) || (c >= '0' && c <= '9'); }

class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  bool done() const { return i_ >= s_.size(); }
  char peek() const { return done() ? '\0' : s_[i_]; }
  void skip_blanks() {
    while (!done() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  // A metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) or a label name (no colons).
  std::string name(bool colon_ok, const char* what) {
    if (done() || !name_start(s_[i_], colon_ok))
      throw LineError(std::string("expected a ") + what + " at column " + std::to_string(i_ + 1));
    const std::size_t b = i_;
    while (!done() && name_char(s_[i_], colon_ok)) ++i_;
    return std::string(s_.substr(b, i_ - b));
  }
  void expect(char c, const std::string& after) {
    if (peek() != c)
      throw LineError(std::string("expected '") + c + "' " + after + " at column " +
                      std::to_string(i_ + 1));
    ++i_;
  }
  // A double-quoted label value with \\, \" and \n escapes.
  std::string quoted() {
    expect('"', "to open a label value");
    std::string v;
    while (true) {
      if (done()) throw LineError("label value not closed by '\"'");
      const char c = s_[i_++];
      if (c == '"') return v;
      if (c != '\\') {
        v += c;
        continue;
      }
      if (done()) throw LineError("label value ends in a lone '\\'");
      const char e = s_[i_++];
      if (e == '\\') v += '\\';
      else if (e == '"') v += '"';
      else if (e == 'n') v += '\n';
      else throw LineError(std::string("unknown escape '\\") + e + "' in a label value");
    }
  }
  // The next blank-separated token.
  std::string_view token() {
    const std::size_t b = i_;
    while (!done() && s_[i_] != ' ' && s_[i_] != '\t') ++i_;
    return s_.substr(b, i_ - b);
  }
  std::string_view rest() const { return s_.substr(std::min(i_, s_.size())); }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

double parse_value(std::string_view t) {
  // NaN and the infinities in any case, as Prometheus's own parser (Go's ParseFloat) reads them:
  // llama-server writes "inf", the text format's examples "+Inf" and "NaN".
  std::string lower(t);
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "nan" || lower == "+nan" || lower == "-nan")
    return std::numeric_limits<double>::quiet_NaN();
  if (lower == "inf" || lower == "+inf" || lower == "infinity" || lower == "+infinity")
    return std::numeric_limits<double>::infinity();
  if (lower == "-inf" || lower == "-infinity") return -std::numeric_limits<double>::infinity();
  const std::string s(t);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  // strtod also reads hex floats and "nan(...)": the format allows only the spellings above and
  // decimal numbers.
  const bool decimal = s.find_first_not_of("0123456789+-.eE") == std::string::npos;
  if (s.empty() || end != s.c_str() + s.size() || !decimal || errno == ERANGE)
    throw LineError("expected a number (or NaN, +Inf, -Inf) as the value, got '" + s + "'");
  return v;
}

std::int64_t parse_timestamp(std::string_view t) {
  const std::string s(t);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE)
    throw LineError("expected an integer timestamp in ms after the value, got '" + s + "'");
  return v;
}

std::string unescape_help(std::string_view t) {
  std::string v;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '\\' && i + 1 < t.size() && (t[i + 1] == '\\' || t[i + 1] == 'n')) {
      v += t[i + 1] == 'n' ? '\n' : '\\';
      ++i;
    } else {
      v += t[i];
    }
  }
  return v;
}

// "# HELP name text", "# TYPE name type"; any other comment is skipped.
void parse_comment(std::string_view line, PromText& out) {
  Cursor c(line.substr(1));
  c.skip_blanks();
  const std::string_view word = c.token();
  if (word != "HELP" && word != "TYPE") return;
  c.skip_blanks();
  const std::string name = c.name(true, "metric name");
  if (word == "HELP") {
    // One blank separates the name from the text; the text keeps any further blanks.
    if (c.peek() == ' ' || c.peek() == '\t') c.expect(c.peek(), "");
    else if (!c.done()) throw LineError("expected a blank after the metric name of # HELP");
    out.help[name] = unescape_help(c.rest());
    return;
  }
  c.skip_blanks();
  const std::string type(c.token());
  static const char* const kTypes[] = {"counter", "gauge", "histogram", "summary", "untyped"};
  if (std::find(std::begin(kTypes), std::end(kTypes), type) == std::end(kTypes))
    throw LineError("unknown metric type '" + type + "' (expected counter, gauge, histogram, "
                    "summary or untyped)");
  c.skip_blanks();
  if (!c.done()) throw LineError("unexpected text after the type: '" + std::string(c.rest()) + "'");
  out.type[name] = type;
}

PromSample parse_sample(std::string_view line) {
  Cursor c(line);
  PromSample s;
  s.name = c.name(true, "metric name");
  c.skip_blanks();
  if (c.peek() == '{') {
    c.expect('{', "");
    c.skip_blanks();
    while (c.peek() != '}') {
      std::string label = c.name(false, "label name");
      c.skip_blanks();
      c.expect('=', "after label name '" + label + "'");
      c.skip_blanks();
      std::string value = c.quoted();
      for (const auto& [k, v] : s.labels)
        if (k == label) throw LineError("label '" + label + "' is given twice");
      s.labels.emplace_back(std::move(label), std::move(value));
      c.skip_blanks();
      if (c.peek() == ',') {
        c.expect(',', "");
        c.skip_blanks();
      } else if (c.peek() != '}') {
        c.expect('}', "or ',' after a label value");
      }
    }
    c.expect('}', "");
  }
  c.skip_blanks();
  if (c.done()) throw LineError("sample '" + s.name + "' has no value");
  s.value = parse_value(c.token());
  c.skip_blanks();
  if (!c.done()) s.timestamp_ms = parse_timestamp(c.token());
  c.skip_blanks();
  if (!c.done()) throw LineError("unexpected text after the sample: '" + std::string(c.rest()) + "'");
  return s;
}

}  // namespace

PromText parse_prometheus_text(std::string_view text) {
  PromText out;
  int line_no = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(at, nl - at);
    at = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t b = 0;
    while (b < line.size() && (line[b] == ' ' || line[b] == '\t')) ++b;
    line.remove_prefix(b);
    if (line.empty()) continue;
    try {
      if (line.front() == '#') parse_comment(line, out);
      else out.samples.push_back(parse_sample(line));
    } catch (const LineError& e) {
      out.rejected.push_back({line_no, "line " + std::to_string(line_no) + ": " + e.what()});
    }
  }
  return out;
}

std::string series_key(const PromSample& s) {
  if (s.labels.empty()) return s.name;
  auto labels = s.labels;
  std::sort(labels.begin(), labels.end());
  std::string k = s.name + "{";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i) k += ',';
    k += labels[i].first + "=\"";
    for (char ch : labels[i].second) {
      if (ch == '\\') k += "\\\\";
      else if (ch == '"') k += "\\\"";
      else if (ch == '\n') k += "\\n";
      else k += ch;
    }
    k += '"';
  }
  return k + "}";
}

}  // namespace llmbench
