// Running one child (child.h) with Boost.Process (v1 API) plus the POSIX
// calls Boost.Process does not offer: process groups and a reap-free exit
// check.
#include "harness/runner/child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace samebits::runner {
namespace {

namespace bp = boost::process;
using Clock = std::chrono::steady_clock;

// Pipes are created without close-on-exec, so a child forked by another
// thread at the same moment would inherit this child's pipe ends and hold
// them open (our reader would then wait for that other child to exit).
// Creating and marking the pipes and forking happen under one lock, and the
// marks keep every pipe end out of every child except through dup2.
std::mutex& SpawnMutex() {
  static std::mutex mutex;
  return mutex;
}

void MarkCloseOnExec(int fd) {
  if (fd >= 0) ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

// The process groups of the children running now, so that a harness
// interrupted by SIGINT or SIGTERM (Ctrl-C, a CI job's cancel) takes them
// with it: they lead groups of their own, so the terminal's signal does
// not reach them. Lock-free slots, because a signal handler may not lock.
constexpr int kSlots = 1024;
std::atomic<pid_t> g_running[kSlots];

void KillChildrenAndDie(int sig) {
  for (std::atomic<pid_t>& slot : g_running) {
    const pid_t pid = slot.load();
    if (pid > 0) ::kill(-pid, SIGKILL);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void InstallInterruptHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      ::sigaction(sig, nullptr, &old);
      if (old.sa_handler == SIG_IGN) continue;  // e.g. nohup: keep ignoring
      struct sigaction action {};
      action.sa_handler = KillChildrenAndDie;
      sigemptyset(&action.sa_mask);
      ::sigaction(sig, &action, nullptr);
    }
  });
}

int Track(pid_t pid) {
  for (int i = 0; i < kSlots; ++i) {
    pid_t expected = 0;
    if (g_running[i].compare_exchange_strong(expected, pid)) return i;
  }
  return -1;  // More than kSlots children at once: untracked, still killed on timeout.
}

void Untrack(int slot) {
  if (slot >= 0) g_running[slot].store(0);
}

// Reads `fd` to its end into `out` (up to `limit` bytes; the rest is read
// and dropped).
void DrainAll(bp::pipe& pipe, std::string* out, size_t limit, bool* truncated) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(pipe.native_source(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const size_t room = limit > out->size() ? limit - out->size() : 0;
    const size_t keep = std::min(room, static_cast<size_t>(n));
    out->append(buffer, keep);
    if (keep < static_cast<size_t>(n)) *truncated = true;
  }
}

// Reads `fd` to its end, keeping the last `lines` lines (each cut to 4 KiB).
void DrainTail(bp::pipe& pipe, std::string* out, size_t lines) {
  std::deque<std::string> tail;
  std::string current;
  char buffer[65536];
  constexpr size_t kMaxLine = 4096;
  auto push = [&] {
    tail.push_back(std::move(current));
    current.clear();
    while (tail.size() > lines) tail.pop_front();
  };
  for (;;) {
    const ssize_t n = ::read(pipe.native_source(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buffer[i] == '\n') {
        push();
      } else if (current.size() < kMaxLine) {
        current += buffer[i];
      }
    }
  }
  if (!current.empty()) push();
  out->clear();
  for (const std::string& line : tail) {
    *out += line;
    *out += '\n';
  }
}

// Returns true once `pid` has exited, without reaping it (WNOWAIT), so its
// id and process group id stay reserved until we kill the group and reap.
bool HasExited(pid_t pid) {
  siginfo_t info{};
  info.si_pid = 0;
  const int rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  if (rc != 0) return errno == ECHILD;
  return info.si_pid == pid;
}

}  // namespace

const std::vector<std::string>& DefaultPassthrough() {
  static const std::vector<std::string> kNames = {"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "TMPDIR",
                                                  "HOME"};
  return kNames;
}

std::map<std::string, std::string> ChildEnvironment(
    const std::map<std::string, std::string>& explicit_vars,
    const std::vector<std::string>& passthrough) {
  std::map<std::string, std::string> env;
  for (const std::string& name : passthrough) {
    if (const char* value = std::getenv(name.c_str())) env[name] = value;
  }
  env["LC_ALL"] = "C";
  for (const auto& [name, value] : explicit_vars) env[name] = value;
  return env;
}

ChildOutcome RunChild(const ChildSpec& spec) {
  ChildOutcome outcome;
  InstallInterruptHandlers();
  const Clock::time_point start = Clock::now();
  std::optional<bp::pipe> out_pipe;
  std::optional<bp::pipe> err_pipe;
  bp::child child;
  {
    std::lock_guard<std::mutex> lock(SpawnMutex());
    out_pipe.emplace();
    err_pipe.emplace();
    for (int fd : {out_pipe->native_source(), out_pipe->native_sink(), err_pipe->native_source(),
                   err_pipe->native_sink()}) {
      MarkCloseOnExec(fd);
    }
    bp::environment env;
    for (const auto& [name, value] : spec.env) env[name] = value;
    std::error_code ec;
    child = bp::child(
        bp::exe = spec.program, bp::args = spec.args, bp::std_out > *out_pipe,
        bp::std_err > *err_pipe, bp::std_in < bp::null, env,
        // The child leads a process group of its own, so a timeout can kill
        // everything it started (kill(-pid)), and a terminal's Ctrl-C
        // reaches the harness, which then decides.
        bp::extend::on_exec_setup = [](auto&) { ::setpgid(0, 0); }, ec);
    if (ec) {
      outcome.start_error = "cannot start " + spec.program + ": " + ec.message();
      return outcome;
    }
  }
  outcome.started = true;
  const pid_t pid = child.id();
  const int slot = Track(pid);
  // The write ends now belong to the child alone (Boost closed ours), so the
  // readers see end-of-file when the child and its group are gone.
  bool truncated = false;
  std::thread out_reader(
      [&] { DrainAll(*out_pipe, &outcome.stdout_text, spec.max_stdout_bytes, &truncated); });
  std::thread err_reader(
      [&] { DrainTail(*err_pipe, &outcome.stderr_tail, spec.stderr_tail_lines); });

  const bool has_deadline = spec.timeout_seconds > 0;
  const Clock::time_point deadline =
      start + std::chrono::microseconds(static_cast<int64_t>(spec.timeout_seconds * 1e6));
  auto pause = std::chrono::microseconds(200);
  while (!HasExited(pid)) {
    if (has_deadline && Clock::now() >= deadline) {
      outcome.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      break;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(10000));
  }
  // The child is a zombie (or dying) and still reserves its id: anything it
  // left in its group dies now, so no straggler holds the pipes open.
  ::kill(-pid, SIGKILL);
  Untrack(slot);
  std::error_code wait_ec;
  child.wait(wait_ec);
  const int status = child.native_exit_code();
  if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  }
  out_reader.join();
  err_reader.join();
  outcome.stdout_truncated = truncated;
  outcome.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return outcome;
}

}  // namespace samebits::runner
