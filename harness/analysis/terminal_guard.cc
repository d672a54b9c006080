// The guard on the standard streams (terminal_guard.h): glibc's
// fopencookie streams whose write function escapes, and C++ stream buffers
// that forward to them, so C and C++ output keep their relative order.
#include "harness/analysis/terminal_guard.h"

#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <streambuf>
#include <string>
#include <string_view>

#include "harness/analysis/terminal_text.h"

namespace samebits::harness {
namespace {

std::FILE* unguarded_stderr = nullptr;

// One guarded file descriptor: bytes in, escaped bytes out. A UTF-8
// sequence cut by a buffer boundary is held back until its end arrives.
struct GuardedFd {
  int fd;
  std::string pending;  // the start of a cut UTF-8 sequence
};

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

ssize_t GuardedWrite(void* cookie, const char* data, size_t size) {
  GuardedFd& g = *static_cast<GuardedFd*>(cookie);
  g.pending.append(data, size);
  const size_t keep = IncompleteUtf8Tail(g.pending);
  std::string out;
  AppendTerminalSafe(out, std::string_view(g.pending).substr(0, g.pending.size() - keep),
                     TerminalEscape::kProgramText);
  g.pending.erase(0, g.pending.size() - keep);
  if (!WriteAll(g.fd, out)) return -1;
  return static_cast<ssize_t>(size);
}

int GuardedClose(void* cookie) {
  GuardedFd& g = *static_cast<GuardedFd*>(cookie);
  std::string out;
  AppendTerminalSafe(out, g.pending, TerminalEscape::kProgramText);  // a cut sequence, escaped
  g.pending.clear();
  return WriteAll(g.fd, out) ? 0 : -1;
}

// Returns a stream writing through `guarded`, which must outlive it.
std::FILE* OpenGuarded(GuardedFd* guarded, int buffering) {
  static const cookie_io_functions_t kFunctions = {nullptr, GuardedWrite, nullptr, GuardedClose};
  std::FILE* f = fopencookie(guarded, "w", kFunctions);
  if (f != nullptr) std::setvbuf(f, nullptr, buffering, buffering == _IONBF ? 0 : BUFSIZ);
  return f;
}

// A C++ stream buffer that hands every character to a C stream.
class FileBuf : public std::streambuf {
 public:
  explicit FileBuf(std::FILE* f) : f_(f) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    return std::fputc(c, f_) == EOF ? traits_type::eof() : c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    return static_cast<std::streamsize>(std::fwrite(s, 1, static_cast<size_t>(n), f_));
  }
  int sync() override { return std::fflush(f_) == 0 ? 0 : -1; }

 private:
  std::FILE* f_;
};

}  // namespace

void GuardTerminalOutput() {
  if (unguarded_stderr != nullptr) return;
  std::fflush(stdout);
  std::fflush(stderr);
  // Never destroyed, and held by these pointers: exit() flushes the streams
  // after static destructors have run and never closes them, so their
  // state must outlive every destructor (a static object would not).
  // LeakSanitizer reported the state as leaked when only the stream held
  // it (ci/sanitize.sh: every `samebits` process, so every CLI test).
  static GuardedFd* const out_fd = new GuardedFd{STDOUT_FILENO, {}};
  static GuardedFd* const err_fd = new GuardedFd{STDERR_FILENO, {}};
  std::FILE* out = OpenGuarded(out_fd, ::isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
  std::FILE* err = OpenGuarded(err_fd, _IONBF);
  if (out == nullptr || err == nullptr) return;  // unguarded rather than silent
  unguarded_stderr = stderr;
  stdout = out;
  stderr = err;
  // Never destroyed: the streams are used until the process ends.
  static FileBuf* const out_buf = new FileBuf(out);
  static FileBuf* const err_buf = new FileBuf(err);
  std::cout.rdbuf(out_buf);
  std::cerr.rdbuf(err_buf);
  std::clog.rdbuf(err_buf);
}

std::FILE* TerminalControlStream() {
  return unguarded_stderr != nullptr ? unguarded_stderr : stderr;
}

}  // namespace samebits::harness
