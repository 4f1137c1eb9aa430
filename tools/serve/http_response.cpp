// Writing HTTP/1.x responses to a non-blocking socket (see http_response.h).
#include "tools/serve/http_response.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>

namespace llmbench {

const char* http_reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

HttpReply::HttpReply(int fd, int minor_version, bool keep_alive,
                           std::chrono::milliseconds write_timeout)
    : fd_(fd), minor_version_(minor_version), keep_alive_(keep_alive),
      write_timeout_(write_timeout) {}

HttpReply::HttpReply(std::string* sink, int minor_version, bool keep_alive)
    : fd_(-1), sink_(sink), minor_version_(minor_version), keep_alive_(keep_alive),
      write_timeout_(0) {}

std::string HttpReply::head(int status, std::string_view content_type,
                               const HttpHeaders& extra) const {
  std::string h = "HTTP/1." + std::to_string(minor_version_) + " " + std::to_string(status) +
                  " " + http_reason(status) + "\r\n";
  if (!content_type.empty()) h += "Content-Type: " + std::string(content_type) + "\r\n";
  for (const auto& [k, v] : always_) h += k + ": " + v + "\r\n";
  for (const auto& [k, v] : extra) h += k + ": " + v + "\r\n";
  return h;
}

bool HttpReply::send(int status, std::string_view content_type, std::string_view body,
                        const HttpHeaders& extra) {
  started_ = true;
  std::string out = head(status, content_type, extra);
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  if (!keep_alive_) out += "Connection: close\r\n";
  else if (minor_version_ == 0) out += "Connection: keep-alive\r\n";
  out += "\r\n";
  out.append(body);  // one write: head and body in one segment
  return write_all(out);
}

bool HttpReply::start_stream(int status, std::string_view content_type,
                                const HttpHeaders& extra) {
  started_ = streaming_ = true;
  std::string out = head(status, content_type, extra);
  if (minor_version_ >= 1) {
    out += "Transfer-Encoding: chunked\r\n";
    if (!keep_alive_) out += "Connection: close\r\n";
  } else {
    keep_alive_ = false;  // the end of the body is the end of the connection
    out += "Connection: close\r\n";
  }
  out += "\r\n";
  return write_all(out);
}

bool HttpReply::write(std::string_view data) {
  if (data.empty()) return !broken_;
  if (minor_version_ == 0) return write_all(data);
  char size[24];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out = size;
  out.append(data);
  out += "\r\n";
  return write_all(out);
}

bool HttpReply::end_stream() {
  if (!streaming_) return !broken_;
  streaming_ = false;
  return minor_version_ == 0 ? !broken_ : write_all("0\r\n\r\n");
}

bool HttpReply::client_gone() const {
  if (broken_) return true;
  if (sink_) return false;
  pollfd p{fd_, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

bool HttpReply::write_all(std::string_view data) {
  if (broken_) return false;
  if (sink_) {
    sink_->append(data);
    return true;
  }
  const auto deadline = std::chrono::steady_clock::now() + write_timeout_;
  while (!data.empty()) {
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(std::size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLOUT, 0};
      if (left.count() > 0 && ::poll(&p, 1, int(left.count())) > 0 &&
          (p.revents & POLLOUT) != 0)
        continue;
    }
    broken_ = true;  // the client went away, or did not read for the whole write timeout
    return false;
  }
  return true;
}

}  // namespace llmbench
