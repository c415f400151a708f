#pragma once

#include <stdexcept>
#include <string>

namespace tlscmp {

// A failure that ends the command: main prints "tlscmp: error: <what>" and exits 1.
// The message is one line that names the cause.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad command-line input: main prints the message and exits 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace tlscmp
