// Report files (report_file.h).
#include "harness/report/report_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace samebits::harness::report {
namespace {

namespace fs = std::filesystem;

// Returns `path` with every symlink followed (also a dangling last one,
// which a write would create the target of) and made absolute.
fs::path Resolve(const fs::path& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  for (int hops = 0; hops < 40; ++hops) {
    p = fs::weakly_canonical(p, ec);
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) return p;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p;
}

// Returns whether `a` and `b` are one existing file (hard links included).
bool SameFile(const fs::path& a, const fs::path& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

void RefuseOutputOverStore(const std::string& output, const std::string& store_path) {
  if (output.empty() || output == "-") return;
  const fs::path out = Resolve(output);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const fs::path store_file = Resolve(store_path + suffix);
    if (out == store_file || SameFile(out, store_file)) {
      throw std::invalid_argument(
          "refusing to write a report to " + output + ": it is the run store" +
          (*suffix != '\0' ? std::string("'s ") + (suffix + 1) + " file" : std::string()) + " (" +
          store_path + suffix + ")");
    }
  }
}

void WriteFileAtomically(const std::string& path, const std::string& text) {
  const fs::path target(path);
  const fs::path parent = target.parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  std::string pattern = (parent.empty() ? fs::path(".") : parent).string() + "/." +
                        target.filename().string() + ".tmp.XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    throw std::runtime_error("cannot write the report " + path + ": cannot create a file in " +
                             (parent.empty() ? std::string(".") : parent.string()) + ": " +
                             std::strerror(errno));
  }
  const std::string tmp(name.data());
  auto fail = [&](const std::string& why) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write the report " + path + ": " + why +
                             " (the previous file, if any, is unchanged)");
  };
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(std::strerror(n < 0 ? errno : EIO));
    done += static_cast<size_t>(n);
  }
  // mkstemp makes the file 0600; a report is for others to read.
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0) fail(std::strerror(errno));
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write the report " + path + ": " + std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write the report " + path + ": " +
                             std::strerror(rename_errno));
  }
}

}  // namespace samebits::harness::report
