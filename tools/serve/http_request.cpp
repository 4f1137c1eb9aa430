// Incremental HTTP/1.x request parsing with limits (see http_request.h).
#include "tools/serve/http_request.h"

#include <algorithm>
#include <cctype>
#include <cstring>

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
// The path of a request target (RFC 9112 3.2): origin-form "/path?query" as is; absolute-form
// "http://host[:port]/path?query" (which a server must accept) without its scheme and
// authority; "*" (asterisk-form, OPTIONS only) as is. False for anything else, and for a
// target with control characters or bytes outside ASCII (they are sent percent-encoded).
bool request_path(std::string_view method, std::string_view target, std::string_view& path) {
  for (const char c : target)
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      return false;
  if (target == "*") {
    path = target;
    return method == "OPTIONS";
  }
  if (!target.empty() && target.front() == '/') {
    path = target;
    return true;
  }
  std::size_t scheme = 0;
  if (lower(target.substr(0, 7)) == "http://") scheme = 7;
  else if (lower(target.substr(0, 8)) == "https://") scheme = 8;
  if (scheme == 0) return false;
  const std::size_t slash = target.find_first_of("/?", scheme);
  if (slash == scheme) return false;  // no host
  path = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  if (path.front() == '?') return false;  // "http://host?q": no path to put the query on
  return true;
}

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

bool RequestReader::next_line(std::string_view& line, std::size_t max_bytes) {
  // Only the first max_bytes are searched: a line longer than that is an error to the caller,
  // and searching the whole buffer again on every read would be quadratic.
  const std::size_t span = std::min(buf_.size() - pos_, max_bytes + 2);
  const void* hit = std::memchr(buf_.data() + pos_, '\n', span);
  if (!hit) return false;
  const std::size_t nl = std::size_t(static_cast<const char*>(hit) - buf_.data());
  line = std::string_view(buf_).substr(pos_, nl - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  pos_ = nl + 1;
  return true;
}

RequestReader::State RequestReader::feed(const char* data, std::size_t n) {
  if (error_status_) return State::kError;
  if (n) buf_.append(data, n);
  if (stage_ == Stage::kDone) return State::kComplete;
  // Bytes already parsed are dropped once they are most of the buffer, so a long body or a
  // stream of empty lines is not kept twice (once raw, once decoded) and the buffer stays
  // bounded by what one request may hold.
  if (pos_ > (std::size_t(64) << 10) && pos_ * 2 > buf_.size()) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
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
  // Empty lines before a request line are ignored (RFC 9112 2.2), but count against the head.
  while (pos_ < buf_.size() && (buf_[pos_] == '\r' || buf_[pos_] == '\n')) {
    ++pos_;
    if (++leading_bytes_ > kMaxHeadBytes)
      return fail(400, "more than " + std::to_string(kMaxHeadBytes) +
                           " bytes of empty lines before the request line");
  }
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
  std::string_view path;
  if (!request_path(line.substr(0, sp1), target, path))
    return fail(400, "malformed request target (expected a path starting with '/', or "
                     "http://HOST/path)");
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
  if (end == std::string_view::npos || end + leading_bytes_ > kMaxHeadBytes) {
    if (rest.size() + leading_bytes_ > kMaxHeadBytes)
      return fail(431, "the request head (request line and headers) is longer than " +
                           std::to_string(kMaxHeadBytes) + " bytes");
    return State::kNeedMore;
  }

  HttpRequest& r = req_;
  r.method = std::string(line.substr(0, sp1));
  const std::size_t q = path.find('?');
  r.target = std::string(path.substr(0, q));
  if (q != std::string_view::npos) r.query = std::string(path.substr(q + 1));
  r.minor_version = version[7] - '0';
  std::string_view h;
  pos_ += first_nl + 1;
  while (next_line(h, kMaxHeadBytes) && !h.empty()) {
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
    return fail(415, "Content-Encoding '" + std::string(encoding.substr(0, 64)) +
                         "' is not supported; send the body uncompressed");
  // Framing headers may come as several lines or as comma lists; every one counts (RFC 9112
  // 6.3: a message with both, or with Content-Length values that differ, is refused, since
  // a proxy in front may have framed it the other way: request smuggling).
  std::string te_all;
  std::string cl_value;
  bool has_te = false, has_cl = false;
  for (const auto& [k, v] : r.headers) {
    if (k == "transfer-encoding") {
      has_te = true;
      te_all += (te_all.empty() ? "" : ",") + v;
    } else if (k == "content-length") {
      has_cl = true;
      std::size_t start = 0;
      const std::string_view list(v);
      while (start <= list.size()) {
        const std::size_t end = std::min(list.find(',', start), list.size());
        const std::string_view one = trim(list.substr(start, end - start));
        if (cl_value.empty()) cl_value = std::string(one);
        else if (one != cl_value)
          return fail(400, "Content-Length is sent more than once with different values");
        start = end + 1;
      }
    }
  }
  const std::string_view te = te_all;
  const std::string_view cl = cl_value;
  if (has_te) {
    if (has_cl) return fail(400, "both Content-Length and Transfer-Encoding were sent");
    if (lower(trim(te)) != "chunked")
      return fail(501, "Transfer-Encoding '" + std::string(te.substr(0, 64)) +
                           "' is not supported (chunked is)");
    stage_ = Stage::kChunkSize;
    return State::kHeadDone;
  }
  if (has_cl) {
    if (cl.empty() || cl.size() > 18 || !all_digits(cl, false))
      return fail(400, "Content-Length '" + std::string(cl.substr(0, 64)) + "' is not a number");
    remaining_ = std::stoull(std::string(cl));
    if (remaining_ > max_body_bytes_)
      return fail(413, "the request body (" + std::string(cl.substr(0, 24)) + " bytes) is larger than the " +
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
        if (!next_line(line, kMaxChunkLineBytes)) {
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
        // Exactly CRLF (or a bare LF) follows a chunk's data: two bytes decide, whatever follows.
        const std::size_t have = buf_.size() - pos_;
        if (have == 0) return State::kNeedMore;
        if (buf_[pos_] == '\n') {
          pos_ += 1;
        } else if (buf_[pos_] == '\r') {
          if (have < 2) return State::kNeedMore;
          if (buf_[pos_ + 1] != '\n') return fail(400, "bad chunk: data longer than its size");
          pos_ += 2;
        } else {
          return fail(400, "bad chunk: data longer than its size");
        }
        stage_ = Stage::kChunkSize;
        break;
      }
      case Stage::kTrailers: {
        // Trailer lines are read and dropped, all of them together within the head limit.
        std::string_view line;
        for (;;) {
          const std::size_t before = pos_;
          const bool whole = next_line(line, kMaxHeadBytes);
          trailer_bytes_ += whole ? pos_ - before : 0;
          if (trailer_bytes_ > kMaxHeadBytes ||
              (!whole && trailer_bytes_ + buf_.size() - pos_ > kMaxHeadBytes))
            return fail(431, "the chunked body's trailers are longer than " +
                                 std::to_string(kMaxHeadBytes) + " bytes");
          if (!whole) return State::kNeedMore;
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
  leading_bytes_ = 0;
  trailer_bytes_ = 0;
  return out;
}

}  // namespace llmbench
