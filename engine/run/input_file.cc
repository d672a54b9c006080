// Reading a small input file (input_file.h).
#include "engine/run/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace samebits::run {

std::string ReadInputFile(const std::string& path, size_t max_bytes) {
  if (path.empty()) throw InputFileError("no file named (the path is empty)");
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is
  // checked on the open descriptor, so the file cannot change in between.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw InputFileError(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw InputFileError(std::string("cannot inspect: ") + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputFileError(S_ISDIR(st.st_mode) ? "is a folder, not a file"
                                             : "is not a regular file (a device, FIFO or socket)");
  }
  if (static_cast<uintmax_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw InputFileError("is " + std::to_string(st.st_size) + " bytes, more than the limit of " +
                         std::to_string(max_bytes));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw InputFileError(std::string("reading failed: ") + std::strerror(e));
    }
    if (n == 0) break;
    // A file that grows while it is read is still held to the limit.
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      ::close(fd);
      throw InputFileError("grew past the limit of " + std::to_string(max_bytes) + " bytes");
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace samebits::run
