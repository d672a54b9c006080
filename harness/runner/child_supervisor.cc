// The supervisor of one child (child_supervisor.h): system calls only.
#include "harness/runner/child_supervisor.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <initializer_list>

namespace samebits::runner {
namespace {

// A line of the supervisor's report, built on the stack.
struct ReportLine {
  char text[128];
  size_t size = 0;
  void Add(const char* s) {
    while (*s != '\0' && size + 1 < sizeof text) text[size++] = *s++;
  }
  void AddNumber(long long value) {
    char digits[24];
    int n = 0;
    const bool negative = value < 0;
    unsigned long long v = negative ? 0ULL - static_cast<unsigned long long>(value)
                                    : static_cast<unsigned long long>(value);
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    if (negative) Add("-");
    while (n > 0 && size + 1 < sizeof text) text[size++] = digits[--n];
  }
  void Send(int fd) {
    text[size++] = '\n';
    size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(fd, text + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      done += static_cast<size_t>(n);
    }
  }
};

void SleepMicroseconds(long us) {
  struct timespec t = {0, us * 1000};
  ::nanosleep(&t, nullptr);
}

// Kills every child of this process (found in /proc by parent id) and
// reports each one not reported before (`reported` holds up to `max` ids).
// Returns the number of children found.
int KillChildrenOf(pid_t self, int report_fd, pid_t* reported, int* reported_count, int max) {
  const int proc = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return 0;
  int found = 0;
  alignas(8) char entries[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, proc, entries, sizeof entries);
    if (n <= 0) break;
    for (long offset = 0; offset < n;) {
      const auto* entry = reinterpret_cast<const struct dirent64*>(entries + offset);
      offset += entry->d_reclen;
      long long pid = 0;
      const char* name = entry->d_name;
      if (*name < '1' || *name > '9') continue;
      for (; *name >= '0' && *name <= '9'; ++name) pid = pid * 10 + (*name - '0');
      if (*name != '\0') continue;
      char path[64] = "/proc/";
      size_t p = 6;
      for (const char* d = entry->d_name; *d != '\0' && p + 6 < sizeof path; ++d) path[p++] = *d;
      ::memcpy(path + p, "/stat", 6);
      const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char stat[512];
      const ssize_t got = ::read(fd, stat, sizeof stat - 1);
      ::close(fd);
      if (got <= 0) continue;
      stat[got] = '\0';
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
      char* open_paren = ::strchr(stat, '(');
      char* close_paren = ::strrchr(stat, ')');
      if (open_paren == nullptr || close_paren == nullptr || close_paren[1] == '\0') continue;
      const char* rest = close_paren + 2;  // the state letter
      if (rest[0] == '\0' || rest[1] != ' ') continue;
      long long ppid = 0;
      for (const char* d = rest + 2; *d >= '0' && *d <= '9'; ++d) ppid = ppid * 10 + (*d - '0');
      if (ppid != self) continue;
      ++found;
      ::kill(static_cast<pid_t>(pid), SIGKILL);
      // A zombie had ended by itself; it is reaped, not reported.
      if (rest[0] == 'Z' || rest[0] == 'X') continue;
      bool seen = false;
      for (int i = 0; i < *reported_count; ++i) seen = seen || reported[i] == pid;
      if (seen || *reported_count >= max) continue;
      reported[(*reported_count)++] = static_cast<pid_t>(pid);
      *close_paren = '\0';
      ReportLine line;
      line.Add("left ");
      line.AddNumber(pid);
      line.Add(" ");
      line.Add(open_paren + 1);
      line.Send(report_fd);
    }
  }
  ::close(proc);
  return found;
}

// The engine's side of the fork: its own process group, /dev/null (or the
// session's socket) as stdin, the pipes as stdout and stderr, default
// signals, then exec. On failure it reports errno and exits 127.
[[noreturn]] void ExecEngine(const SpawnPlan& plan) {
  ::setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  const int null_fd =
      plan.in_read >= 0 ? ::fcntl(plan.in_read, F_DUPFD_CLOEXEC, 3) : ::open("/dev/null", O_RDONLY);
  // Moved above 2 first, so the dup2s below cannot overwrite each other.
  const int out = ::fcntl(plan.out_write, F_DUPFD_CLOEXEC, 3);
  const int err = ::fcntl(plan.err_write, F_DUPFD_CLOEXEC, 3);
  if (null_fd < 0 || out < 0 || err < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(out, 1) < 0 ||
      ::dup2(err, 2) < 0) {
    ReportLine line;
    line.Add("exec-error ");
    line.AddNumber(errno);
    line.Send(plan.report_write);
    ::_exit(127);
  }
  // Nothing else of the harness reaches the engine.
  ::syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
  ::execve(plan.program, plan.argv, plan.envp);
  ReportLine line;
  line.Add("exec-error ");
  line.AddNumber(errno);
  line.Send(plan.report_write);
  ::_exit(127);
}

}  // namespace

[[noreturn]] void Supervise(const SpawnPlan& plan) {
  ::setpgid(0, 0);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_DFL);
  ::signal(SIGPIPE, SIG_IGN);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  const pid_t engine = ::fork();
  if (engine == 0) ExecEngine(plan);
  // Only the engine holds the pipes' write ends now (and what it starts).
  ::close(plan.out_write);
  ::close(plan.err_write);
  if (plan.report_write > 3) ::syscall(SYS_close_range, 3U, plan.report_write - 1U, 0U);
  ::syscall(SYS_close_range, plan.report_write + 1U, ~0U, 0U);
  if (engine < 0) {
    ReportLine line;
    line.Add("exec-error ");
    line.AddNumber(errno);
    line.Send(plan.report_write);
    ::_exit(0);
  }
  ReportLine started;
  started.Add("engine ");
  started.AddNumber(engine);
  started.Send(plan.report_write);
  int status = 0;
  while (::waitpid(engine, &status, 0) < 0 && errno == EINTR) {
  }
  ReportLine ended;
  ended.Add("status ");
  ended.AddNumber(status);
  ended.Send(plan.report_write);
  // Whatever is left: the engine's group, and every orphan it made, which
  // the subreaper flag made ours. Repeats until no child is left, since
  // killing a process orphans its own children to us.
  const pid_t self = ::getpid();
  pid_t reported[64];
  int reported_count = 0;
  for (;;) {
    KillChildrenOf(self, plan.report_write, reported, &reported_count, 64);
    ::kill(-engine, SIGKILL);
    int ignored = 0;
    pid_t reaped = 0;
    while ((reaped = ::waitpid(-1, &ignored, WNOHANG)) > 0) {
    }
    if (reaped < 0 && errno == ECHILD) break;
    SleepMicroseconds(1000);
  }
  ::_exit(0);
}

}  // namespace samebits::runner
