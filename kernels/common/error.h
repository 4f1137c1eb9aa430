// llmbench::Error and the check macros used by host code.
// Errors are exceptions carrying file:line and the failed statement; `main` catches them once
// and picks the exit code. BadInput marks errors caused by the user's input (exit code 2).
#pragma once

#include <stdexcept>
#include <string>

namespace llmbench {

// A failure inside llmbench or its libraries (exit code 1 when it reaches main).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The user's input is wrong: a flag, a profile, a model file, a database (exit code 2).
class BadInput : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void throw_check_failure(const char* file, int line, const char* statement,
                                      const std::string& detail);

}  // namespace llmbench

// LLMBENCH_CHECK(cond, "message"): throws llmbench::Error naming file:line and the condition.
#define LLMBENCH_CHECK(cond, detail)                                               \
  do {                                                                             \
    if (!(cond)) ::llmbench::throw_check_failure(__FILE__, __LINE__, #cond, detail); \
  } while (0)
