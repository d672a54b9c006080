// The output guard (output_file.h).
#include "harness/store/output_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace samebits::store {
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

// Returns whether `a` and `b` name one file: the same path once resolved,
// or one existing inode (hard links).
bool SameFile(const fs::path& a, const fs::path& b) {
  if (Resolve(a) == Resolve(b)) return true;
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// Returns what kind of thing `mode` is, for a refusal ("a FIFO").
std::string KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

[[noreturn]] void Refuse(const NamedPath& output, const std::string& why) {
  throw std::invalid_argument("refusing to write " + output.flag + " to " + output.path + ": " +
                              why);
}

// Refuses `output` when it is one of the store's files.
void RefuseStoreFiles(const NamedPath& output, const std::vector<std::string>& stores) {
  for (const std::string& store : stores) {
    if (store.empty()) continue;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      if (!SameFile(output.path, store + suffix)) continue;
      const std::string side =
          *suffix != '\0' ? std::string("'s ") + (suffix + 1) + " file" : std::string();
      Refuse(output, "it is the run store" + side + " (" + store + suffix + ")");
    }
  }
}

// Refuses `output` when the command also reads it.
void RefuseInputs(const NamedPath& output, const std::vector<NamedPath>& inputs) {
  std::error_code ec;
  for (const NamedPath& input : inputs) {
    // A value that is no file (a run id, a configuration name) is no input file.
    if (input.path.empty() || !fs::exists(input.path, ec)) continue;
    if (SameFile(output.path, input.path))
      Refuse(output, "this command also reads it (" + input.flag + " " + input.path + ")");
  }
}

}  // namespace

void CheckCommandOutputs(const CommandPaths& paths) {
  std::vector<const NamedPath*> seen;
  for (const NamedPath& output : paths.outputs) {
    if (output.path.empty() || output.path == "-") continue;
    RefuseStoreFiles(output, paths.stores);
    RefuseInputs(output, paths.inputs);
    for (const NamedPath* earlier : seen) {
      if (SameFile(output.path, earlier->path))
        Refuse(output, "it is also written as " + earlier->flag);
    }
    seen.push_back(&output);
    struct stat st {};
    if (::stat(output.path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      Refuse(output, "it is " + KindOf(st.st_mode) + "; give the path of a regular file");
  }
  for (const NamedPath& folder : paths.output_folders) {
    if (folder.path.empty()) continue;
    RefuseStoreFiles(folder, paths.stores);
    RefuseInputs(folder, paths.inputs);
    struct stat st {};
    if (::stat(folder.path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
      Refuse(folder, "it is not a folder");
  }
}

void WriteOutputFile(const std::string& path, const std::string& bytes) {
  const fs::path target = Resolve(path);
  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode)) {
    throw std::runtime_error("cannot write " + path + ": it is " + KindOf(existing.st_mode) +
                             ", which is never replaced");
  }
  const fs::path parent = target.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string pattern = parent.string() + "/." + target.filename().string() + ".tmp.XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    throw std::runtime_error("cannot write " + path + ": cannot create a file in " +
                             parent.string() + ": " + std::strerror(errno));
  }
  const std::string tmp(name.data());
  auto fail = [&](int error) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(error) +
                             " (the previous file, if any, is unchanged)");
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? errno : EIO);
    done += static_cast<size_t>(n);
  }
  // mkstemp makes the file 0600; an output is for others to read, and a
  // replaced file keeps its mode.
  ::fchmod(fd, exists ? (existing.st_mode & 07777) : 0644);
  if (::fsync(fd) != 0) fail(errno);
  if (::close(fd) != 0) {
    const int close_errno = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(close_errno));
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int rename_errno = errno;
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(rename_errno));
  }
}

}  // namespace samebits::store
