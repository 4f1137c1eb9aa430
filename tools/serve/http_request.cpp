// Incremental HTTP/1.x request parsing with limits (see http_request.h).
#include "tools/serve/http_request.h"

#include <algorithm>
#include <cctype>

namespace llmbench {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

// "a, B ,c" contains token `t` (case-insensitive)?
bool all_digits(std::string_view s, bool hex) {
  return std::all_of(s.begin(), s.end(), [hex](char c) {
    const auto u = static_cast<unsigned char>(c);
    return hex ? std::isxdigit(u) != 0 : std::isdigit(u) != 0;
  });
}

bool list_has(std::string_view list, std::string_view t) {
  const std::string l = lower(list);
  std::size_t start = 0;
  while (start <= l.size()) {
    const std::size_t end = std::min(l.find(',', start), l.size());
    if (trim(std::string_view(l).substr(start, end - start)) == t) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

std::string_view HttpRequest::header(std::string_view lower_name) const {
  for (const auto& [k, v] : headers)
    if (k == lower_name) return v;
  return {};
}

RequestReader::State RequestReader::fail(int status, std::string message) {
  error_status_ = status;
  error_message_ = std::move(message);
  return State::kError;
}

bool RequestReader::next_line(std::string_view& line) {
  const std::size_t nl = buf_.find('\n', pos_);
  if (nl == std::string::npos) return false;
  line = std::string_view(buf_).substr(pos_, nl - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  pos_ = nl + 1;
  return true;
}

RequestReader::State RequestReader::feed(const char* data, std::size_t n) {
  if (error_status_) return State::kError;
  if (n) buf_.append(data, n);
  if (stage_ == Stage::kDone) return State::kComplete;
  if (stage_ == Stage::kHead) {
    const State s = parse_head();
    if (s != State::kHeadDone) return s;
    if (stage_ != Stage::kDone) {
      // The body (if any bytes of it are here) is parsed on the next feed.
      return State::kHeadDone;
    }
    return State::kComplete;
  }
  return parse_body();
}

RequestReader::State RequestReader::parse_head() {
  // Empty lines before a request line are ignored (RFC 9112 2.2).
  while (pos_ < buf_.size() && (buf_[pos_] == '\r' || buf_[pos_] == '\n')) ++pos_;
  const std::string_view rest = std::string_view(buf_).substr(pos_);
  // The request line is judged as soon as it is whole, so garbage is refused at once.
  const std::size_t first_nl = rest.find('\n');
  if (first_nl == std::string_view::npos) {
    if (rest.size() > kMaxTargetBytes + 32) {
      return fail(414, "the request line is longer than " + std::to_string(kMaxTargetBytes) +
                           " bytes");
    }
    return State::kNeedMore;
  }
  std::string_view line = rest.substr(0, first_nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos ||
      !is_token(line.substr(0, sp1)) || sp2 == sp1 + 1)
    return fail(400, "malformed request line (expected METHOD TARGET HTTP/1.1)");
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (version.substr(0, 5) != "HTTP/" || version.size() != 8 || version[6] != '.')
    return fail(400, "malformed request line (expected METHOD TARGET HTTP/1.1)");
  if (version != "HTTP/1.1" && version != "HTTP/1.0")
    return fail(505, "HTTP version " + std::string(version.substr(5)) +
                         " is not supported (HTTP/1.0 and HTTP/1.1 are)");
  if (target.size() > kMaxTargetBytes)
    return fail(414, "the request target is longer than " + std::to_string(kMaxTargetBytes) +
                         " bytes");
  // The whole head: up to the first empty line.
  std::size_t end = std::string_view::npos;
  for (std::size_t at = first_nl; at != std::string_view::npos; at = rest.find('\n', at + 1)) {
    const std::size_t next = at + 1;
    if (next < rest.size() && rest[next] == '\n') { end = next + 1; break; }
    if (next + 1 < rest.size() && rest[next] == '\r' && rest[next + 1] == '\n') {
      end = next + 2;
      break;
    }
  }
  if (end == std::string_view::npos || end > kMaxHeadBytes) {
    if (rest.size() > kMaxHeadBytes)
      return fail(431, "the request head (request line and headers) is longer than " +
                           std::to_string(kMaxHeadBytes) + " bytes");
    return State::kNeedMore;
  }

  HttpRequest& r = req_;
  r.method = std::string(line.substr(0, sp1));
  const std::size_t q = target.find('?');
  r.target = std::string(target.substr(0, q));
  if (q != std::string_view::npos) r.query = std::string(target.substr(q + 1));
  r.minor_version = version[7] - '0';
  std::string_view h;
  pos_ += first_nl + 1;
  while (next_line(h) && !h.empty()) {
    const std::size_t colon = h.find(':');
    if (colon == std::string_view::npos || !is_token(h.substr(0, colon)))
      return fail(400, "malformed header line");
    r.headers.emplace_back(lower(h.substr(0, colon)), std::string(trim(h.substr(colon + 1))));
  }
  const std::string_view connection = r.header("connection");
  r.keep_alive = r.minor_version == 1 ? !list_has(connection, "close")
                                      : list_has(connection, "keep-alive");
  r.expect_continue = list_has(r.header("expect"), "100-continue");

  return body_framing();
}

RequestReader::State RequestReader::body_framing() {
  const HttpRequest& r = req_;
  const std::string_view encoding = r.header("content-encoding");
  if (!encoding.empty() && lower(trim(encoding)) != "identity")
    return fail(415, "Content-Encoding '" + std::string(encoding) +
                         "' is not supported; send the body uncompressed");
  const std::string_view te = r.header("transfer-encoding");
  const std::string_view cl = r.header("content-length");
  if (!te.empty()) {
    if (!cl.empty()) return fail(400, "both Content-Length and Transfer-Encoding were sent");
    if (lower(trim(te)) != "chunked")
      return fail(501, "Transfer-Encoding '" + std::string(te) +
                           "' is not supported (chunked is)");
    stage_ = Stage::kChunkSize;
    return State::kHeadDone;
  }
  if (!cl.empty()) {
    if (cl.size() > 18 || !all_digits(cl, false))
      return fail(400, "Content-Length '" + std::string(cl) + "' is not a number");
    remaining_ = std::stoull(std::string(cl));
    if (remaining_ > max_body_bytes_)
      return fail(413, "the request body (" + std::string(cl) + " bytes) is larger than the " +
                           std::to_string(max_body_bytes_) + "-byte limit");
    stage_ = remaining_ > 0 ? Stage::kBody : Stage::kDone;
    return State::kHeadDone;
  }
  stage_ = Stage::kDone;
  return State::kHeadDone;
}

RequestReader::State RequestReader::parse_body() {
  for (;;) {
    switch (stage_) {
      case Stage::kBody:
      case Stage::kChunkData: {
        const std::size_t n = std::min(remaining_, buf_.size() - pos_);
        req_.body.append(buf_, pos_, n);
        pos_ += n;
        remaining_ -= n;
        if (remaining_ > 0) return State::kNeedMore;
        stage_ = stage_ == Stage::kBody ? Stage::kDone : Stage::kChunkEnd;
        break;
      }
      case Stage::kChunkSize: {
        std::string_view line;
        if (!next_line(line)) {
          if (buf_.size() - pos_ > kMaxChunkLineBytes) return fail(400, "bad chunk size line");
          return State::kNeedMore;
        }
        const std::string_view size = trim(line.substr(0, line.find(';')));
        if (size.empty() || size.size() > 15 || !all_digits(size, true))
          return fail(400, "bad chunk size '" + std::string(size.substr(0, 32)) + "'");
        remaining_ = std::stoull(std::string(size), nullptr, 16);
        if (req_.body.size() + remaining_ > max_body_bytes_)
          return fail(413, "the chunked request body is larger than the " +
                               std::to_string(max_body_bytes_) + "-byte limit");
        stage_ = remaining_ == 0 ? Stage::kTrailers : Stage::kChunkData;
        break;
      }
      case Stage::kChunkEnd: {
        std::string_view line;
        if (!next_line(line)) return State::kNeedMore;
        if (!line.empty()) return fail(400, "bad chunk: data longer than its size");
        stage_ = Stage::kChunkSize;
        break;
      }
      case Stage::kTrailers: {
        std::string_view line;
        for (;;) {
          if (!next_line(line)) {
            if (buf_.size() - pos_ > kMaxHeadBytes) return fail(431, "trailers too long");
            return State::kNeedMore;
          }
          if (line.empty()) break;
        }
        stage_ = Stage::kDone;
        break;
      }
      case Stage::kDone:
        return State::kComplete;
      case Stage::kHead:
        return State::kNeedMore;
    }
  }
}

HttpRequest RequestReader::take() {
  HttpRequest out = std::move(req_);
  req_ = HttpRequest{};
  buf_.erase(0, pos_);
  pos_ = 0;
  stage_ = Stage::kHead;
  remaining_ = 0;
  return out;
}

}  // namespace llmbench
