// Reading a small input file (a scenario) that may be anything a user
// names: a folder, a FIFO, /dev/zero, an empty path. Only a regular file up
// to a size limit is read, so a wrong name fails at once with a reason
// instead of reading forever or exhausting memory.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace samebits::run {

// Why an input file cannot be read; the message is the reason alone
// ("is a folder, not a file"), for the caller to prefix with what the file
// is and its path.
class InputFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Returns the contents of the regular file at `path`, at most `max_bytes`.
// Throws InputFileError for an empty path, a missing or unreadable file, a
// folder, anything that is not a regular file, and a file larger than
// `max_bytes`.
std::string ReadInputFile(const std::string& path, size_t max_bytes);

}  // namespace samebits::run
