// A raw loopback HTTP connection for the server tests: bytes exactly as written (garbage,
// pipelining, half requests), reads bounded in time; and a raw response's status and JSON body.
#pragma once
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace llmbench::test {

// A raw loopback connection.
struct Raw {
  int fd = -1;
  explicit Raw(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(std::uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  }
  ~Raw() { ::close(fd); }
  bool send(const std::string& s) {
    return ::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == ssize_t(s.size());
  }
  // Reads until the peer closes, `until` has appeared `times` times, or `limit` passes.
  std::string read(std::chrono::milliseconds limit, const std::string& until = "", int times = 1) {
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    auto seen = [&] {
      int n = 0;
      for (std::size_t at = out.find(until); at != std::string::npos; at = out.find(until, at + 1))
        ++n;
      return n;
    };
    while (std::chrono::steady_clock::now() < deadline) {
      if (!until.empty() && seen() >= times) break;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[8192];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, std::size_t(n));
    }
    return out;
  }
};

// The status and JSON body of one raw response (the body after the blank line).
inline std::pair<int, nlohmann::json> status_and_json(const std::string& response) {
  std::smatch m;
  if (!std::regex_search(response, m, std::regex(R"(^HTTP/1\.[01] (\d+))"))) return {0, {}};
  const std::size_t body = response.find("\r\n\r\n");
  return {std::stoi(m[1]), nlohmann::json::parse(response.substr(body + 4), nullptr, false)};
}

}  // namespace llmbench::test
