// Running one child (child.h) under a supervisor process of its own
// (child_supervisor.h), which kills and reaps whatever the engine leaves
// behind, so nothing outlives the cell and nothing holds the output pipes
// open. The harness reads both pipes and the supervisor's report with
// poll() against the cell's deadline, so no wait (reads included) outlasts
// the timeout by more than a short grace; an interrupt takes the running
// engines with it (child_interrupts.h).
#include "harness/runner/child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <sstream>
#include <string_view>

#include "harness/runner/child_interrupts.h"
#include "harness/runner/child_supervisor.h"

namespace samebits::runner {
namespace {

using Clock = std::chrono::steady_clock;

// How long the harness waits, past the deadline (or past the supervisor's
// end), for the supervisor's clean-up and the pipes' end before it stops
// reading and kills the supervisor.
constexpr auto kGrace = std::chrono::seconds(2);

// Pipes are created close-on-exec, but the supervisor does not exec: a
// supervisor forked by another thread at the same moment would hold this
// child's pipe ends until it closes its inherited descriptors. Creating the
// pipes, forking and closing the parent's write ends happen under one lock,
// so no fork ever sees another cell's write end.
std::mutex& SpawnMutex() {
  static std::mutex mutex;
  return mutex;
}

// Keeps the last `lines` lines of a stream (each cut to 4 KiB).
class TailKeeper {
 public:
  explicit TailKeeper(size_t lines) : lines_(lines) {}
  void Add(const char* data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      if (data[i] == '\n') {
        Push();
      } else if (current_.size() < kMaxLine) {
        current_ += data[i];
      }
    }
  }
  std::string Finish() {
    if (!current_.empty()) Push();
    std::string out;
    for (const std::string& line : tail_) out += line + '\n';
    return out;
  }

 private:
  static constexpr size_t kMaxLine = 4096;
  void Push() {
    tail_.push_back(std::move(current_));
    current_.clear();
    while (tail_.size() > lines_) tail_.pop_front();
  }
  size_t lines_;
  std::deque<std::string> tail_;
  std::string current_;
};

// What the supervisor reported, parsed as it arrives.
struct SupervisorReport {
  std::string pending;  // an unfinished line
  pid_t engine = 0;
  bool has_status = false;
  int status = 0;
  int exec_errno = 0;
  std::vector<std::string> left;

  void Add(const char* data, size_t size) {
    pending.append(data, size);
    size_t end;
    while ((end = pending.find('\n')) != std::string::npos) {
      Parse(pending.substr(0, end));
      pending.erase(0, end + 1);
    }
  }
  void Parse(const std::string& line) {
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word == "engine") {
      in >> engine;
    } else if (word == "status") {
      has_status = static_cast<bool>(in >> status);
    } else if (word == "exec-error") {
      in >> exec_errno;
    } else if (word == "left") {
      long long pid = 0;
      in >> pid;
      std::string name;
      std::getline(in, name);
      if (!name.empty() && name.front() == ' ') name.erase(0, 1);
      left.push_back(name + " (pid " + std::to_string(pid) + ")");
    }
  }
};

// One pipe read by the poll loop.
struct Source {
  int fd = -1;
  bool open() const { return fd >= 0; }
  void Close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// Returns the milliseconds from now to `t` for poll() (at least 0).
int MillisecondsUntil(Clock::time_point t) {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(t - Clock::now()).count();
  return ms < 0 ? 0 : static_cast<int>(std::min<int64_t>(ms, 1 << 30));
}

// Everything the forked processes need, made before the fork: the
// program's arguments and environment as C arrays.
struct ExecArguments {
  explicit ExecArguments(const ChildSpec& spec) {
    for (const auto& [name, value] : spec.env) {
      std::string entry = name;
      env_strings.push_back(entry.append("=").append(value));
    }
    argv.push_back(const_cast<char*>(spec.program.c_str()));
    for (const std::string& a : spec.args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (std::string& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
  std::vector<std::string> env_strings;
  std::vector<char*> argv;
  std::vector<char*> envp;
};

// A started supervisor, the read ends of its three pipes and, for a
// session, the harness's end of the engine's stdin.
struct Spawned {
  pid_t supervisor = -1;
  int out = -1, err = -1, report = -1;
  int in = -1;
};

void CloseAll(std::initializer_list<int> fds) {
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
}

// Starts the supervisor (which starts the engine). The engine's stdin is a
// socket when `with_stdin` (a session's: a socket, so that a write to an
// engine that died fails with EPIPE instead of raising SIGPIPE), else
// /dev/null. Returns nothing and sets `*error` when a pipe or the fork
// fails.
std::optional<Spawned> Spawn(const ChildSpec& spec, const ExecArguments& exec, std::string* error,
                             bool with_stdin = false) {
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, report_pipe[2] = {-1, -1};
  int in_socket[2] = {-1, -1};
  std::lock_guard<std::mutex> lock(SpawnMutex());
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(report_pipe, O_CLOEXEC) != 0 ||
      (with_stdin && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_socket) != 0)) {
    *error = "cannot start " + spec.program + ": pipe: " + ::strerror(errno);
    CloseAll({out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], report_pipe[0], report_pipe[1],
              in_socket[0], in_socket[1]});
    return std::nullopt;
  }
  const SpawnPlan plan{spec.program.c_str(), exec.argv.data(), exec.envp.data(), out_pipe[1],
                       err_pipe[1],          report_pipe[1],   in_socket[1]};
  const pid_t supervisor = ::fork();
  if (supervisor == 0) Supervise(plan);
  const int fork_errno = errno;
  CloseAll({out_pipe[1], err_pipe[1], report_pipe[1], in_socket[1]});
  if (supervisor < 0) {
    CloseAll({out_pipe[0], err_pipe[0], report_pipe[0], in_socket[0]});
    *error = "cannot start " + spec.program + ": fork: " + ::strerror(fork_errno);
    return std::nullopt;
  }
  return Spawned{supervisor, out_pipe[0], err_pipe[0], report_pipe[0], in_socket[0]};
}

// The harness's side of a running child: reads its stdout (up to the
// limit), the tail of its stderr and the supervisor's report until all
// three pipes close, killing the engine at its deadline and giving up on
// pipes held open past a grace period. In a session it reads one request
// at a time (Rebind): its own outcome, start and deadline, until a line of
// stdout ends the request.
class ChildWatch {
 public:
  ChildWatch(const ChildSpec& spec, Clock::time_point start, const Spawned& spawned,
             ChildOutcome& outcome)
      : spec_(spec),
        supervisor_(spawned.supervisor),
        out_{spawned.out},
        err_{spawned.err},
        report_{spawned.report},
        in_{spawned.in},
        tail_(spec.stderr_tail_lines),
        has_deadline_(spec.timeout_seconds > 0) {
    Rebind(outcome, start);
  }

  // From now on the output goes to `outcome`, timed from `start`, with a
  // deadline of its own; stdout the child wrote after the end of the
  // previous request comes first.
  void Rebind(ChildOutcome& outcome, Clock::time_point start) {
    outcome_ = &outcome;
    start_ = start;
    deadline_ = start + std::chrono::microseconds(static_cast<int64_t>(
                            (spec_.timeout_seconds > 0 ? spec_.timeout_seconds : 0) * 1e6));
    tail_ = TailKeeper(spec_.stderr_tail_lines);
    scanned_ = 0;
    request_ended_ = false;
    if (!carried_.empty()) {
      AddStdout(carried_.data(), carried_.size());
      carried_.clear();
    }
  }

  // Judges each whole line of stdout from now on (null: none).
  void JudgeLines(const ChildLineJudge* judge) {
    judge_ = judge;
    ScanLines();
  }

  // Polls the pipes until they all close, the harness gives up on them,
  // or a judged line ends the request. Returns true in the last case (the
  // child still runs).
  bool Run() {
    while (!request_ended_ && (out_.open() || err_.open() || report_.open())) {
      if (!PollOnce()) break;
      const Clock::time_point now = Clock::now();
      if (has_deadline_ && !outcome_->timed_out && now >= deadline_) KillAtDeadline(now);
      if (give_up_ && now >= *give_up_) break;
    }
    return request_ended_;
  }

  // Closes the child's stdin (a session's end of input).
  void CloseStdin() { in_.Close(); }

  // Returns the child's stdin, or -1.
  int stdin_fd() const { return in_.fd; }

  // Stops tracking the engine, notes pipes still held open, closes them and
  // reaps the supervisor.
  void Finish() {
    UntrackEngineGroup(slot_);
    // A pipe still open here is held by a process outside the supervisor's
    // tree (one that made itself a subreaper, or got the descriptor passed).
    outcome_->output_held_open = out_.open() || err_.open();
    if (report_.open()) ::kill(supervisor_, SIGKILL);  // stuck collecting: stop it
    for (Source* s : {&out_, &err_, &report_, &in_}) s->Close();
    int supervisor_status = 0;
    while (::waitpid(supervisor_, &supervisor_status, 0) < 0 && errno == EINTR) {
    }
  }

  SupervisorReport& supervised() { return supervised_; }
  TailKeeper& tail() { return tail_; }

 private:
  // Returns when poll() should return at the latest.
  Clock::time_point NextWake() {
    Clock::time_point wake = Clock::time_point::max();
    if (has_deadline_ && !outcome_->timed_out) wake = deadline_;
    if (give_up_) wake = std::min(wake, *give_up_);
    if (!report_.open() && !give_up_) {
      // The supervisor has killed all it could; what still holds a pipe
      // lives outside its tree.
      give_up_ = Clock::now() + kGrace;
      wake = std::min(wake, *give_up_);
    }
    return wake;
  }

  // Waits for the open pipes and reads what is ready. Returns false when
  // poll() fails.
  bool PollOnce() {
    const Clock::time_point wake = NextWake();
    struct pollfd fds[3];
    Source* sources[3];
    nfds_t count = 0;
    for (Source* s : {&out_, &err_, &report_}) {
      if (!s->open()) continue;
      fds[count] = {s->fd, POLLIN, 0};
      sources[count++] = s;
    }
    const int timeout = wake == Clock::time_point::max() ? -1 : MillisecondsUntil(wake);
    const int ready = ::poll(fds, count, timeout);
    if (ready < 0 && errno != EINTR) return false;
    for (nfds_t i = 0; ready > 0 && i < count; ++i) {
      if (fds[i].revents != 0) Read(*sources[i]);
    }
    return true;
  }

  // Keeps stdout bytes (up to the limit) and when they arrived.
  void AddStdout(const char* data, size_t got) {
    std::string& text = outcome_->stdout_text;
    const size_t room =
        spec_.max_stdout_bytes > text.size() ? spec_.max_stdout_bytes - text.size() : 0;
    text.append(data, std::min(room, got));
    if (got > room) outcome_->stdout_truncated = true;
    outcome_->stdout_arrivals.emplace_back(
        text.size(), std::chrono::duration<double, std::milli>(Clock::now() - start_).count());
  }

  // Shows each new whole line of stdout to the judge. A line that ends the
  // request cuts the text after it (what follows is the next request's); a
  // line that breaks it closes the child's stdin: the rest of the child's
  // life is this request's.
  void ScanLines() {
    std::string& text = outcome_->stdout_text;
    size_t end;
    while (judge_ != nullptr && (end = text.find('\n', scanned_)) != std::string::npos) {
      const std::string_view line(text.data() + scanned_, end - scanned_);
      scanned_ = end + 1;
      switch ((*judge_)(line)) {
        case ChildLine::kMore:
          break;
        case ChildLine::kEndsRequest:
          carried_ = text.substr(scanned_);
          text.resize(scanned_);
          request_ended_ = true;
          return;
        case ChildLine::kBreaksRequest:
          judge_ = nullptr;
          CloseStdin();
          return;
      }
    }
  }

  // Reads once from `s`, closing it at its end.
  void Read(Source& s) {
    const ssize_t n = ::read(s.fd, buffer_, sizeof buffer_);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      s.Close();
      return;
    }
    const size_t got = static_cast<size_t>(n);
    if (&s == &out_) {
      AddStdout(buffer_, got);
      ScanLines();
    } else if (&s == &err_) {
      tail_.Add(buffer_, got);
    } else {
      supervised_.Add(buffer_, got);
      if (supervised_.engine > 0 && slot_ < 0 && !supervised_.has_status) {
        slot_ = TrackEngineGroup(supervised_.engine);
      }
      if (supervised_.has_status) {
        UntrackEngineGroup(slot_);
        slot_ = -1;
      }
    }
  }

  // The engine's group dies now; its supervisor then collects the rest.
  void KillAtDeadline(Clock::time_point now) {
    outcome_->timed_out = true;
    if (supervised_.engine > 0 && !supervised_.has_status) {
      ::kill(-supervised_.engine, SIGKILL);
      ::kill(supervised_.engine, SIGKILL);
    }
    give_up_ = now + kGrace;
  }

  const ChildSpec& spec_;
  Clock::time_point start_;
  ChildOutcome* outcome_ = nullptr;
  const pid_t supervisor_;
  Source out_, err_, report_, in_;
  SupervisorReport supervised_;
  TailKeeper tail_;
  int slot_ = -1;
  const bool has_deadline_;
  Clock::time_point deadline_;
  // Past this point the harness stops waiting: set at the deadline, or when
  // the supervisor is done but the pipes are still held open.
  std::optional<Clock::time_point> give_up_;
  // A session's: the judge of stdout's lines, how far the text was shown
  // to it, whether a line ended the request, and the bytes after that line.
  const ChildLineJudge* judge_ = nullptr;
  size_t scanned_ = 0;
  bool request_ended_ = false;
  std::string carried_;
  char buffer_[65536];
};

// Fills in how the child ended, from what its supervisor reported.
void ConcludeOutcome(const ChildSpec& spec, Clock::time_point start, ChildWatch& watch,
                     ChildOutcome& outcome) {
  SupervisorReport& supervised = watch.supervised();
  if (supervised.exec_errno != 0) {
    outcome.start_error = "cannot start " + spec.program + ": " + ::strerror(supervised.exec_errno);
    return;
  }
  outcome.started = true;
  if (supervised.has_status) {
    if (WIFSIGNALED(supervised.status)) {
      outcome.signal = WTERMSIG(supervised.status);
    } else if (WIFEXITED(supervised.status)) {
      outcome.exit_code = WEXITSTATUS(supervised.status);
    }
  } else {
    outcome.signal = SIGKILL;  // killed before its supervisor could say how it ended
  }
  outcome.left_running = std::move(supervised.left);
  outcome.stderr_tail = watch.tail().Finish();
  outcome.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

double ArrivalMs(const ChildOutcome& outcome, size_t offset) {
  const auto& arrivals = outcome.stdout_arrivals;
  const auto it = std::upper_bound(
      arrivals.begin(), arrivals.end(), offset,
      [](size_t o, const std::pair<size_t, double>& arrival) { return o < arrival.first; });
  return it == arrivals.end() ? -1 : it->second;
}

const std::vector<std::string>& DefaultPassthrough() {
  // The sanitizer options reach a sanitized engine too (ci/sanitize.sh), so
  // its reports are written where the script looks for them.
  static const std::vector<std::string> kNames = {
      "PATH",         "LD_PRELOAD",    "LD_LIBRARY_PATH", "TMPDIR",      "HOME",
      "ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS",    "LSAN_OPTIONS"};
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
  outcome.start_error = StartRefusal();
  if (!outcome.start_error.empty()) return outcome;
  const Clock::time_point start = Clock::now();
  ExecArguments exec(spec);
  std::optional<Spawned> spawned = Spawn(spec, exec, &outcome.start_error);
  if (!spawned) return outcome;
  ChildWatch watch(spec, start, *spawned, outcome);
  watch.Run();
  watch.Finish();
  ConcludeOutcome(spec, start, watch, outcome);
  return outcome;
}

struct ChildSession::Impl {
  explicit Impl(const ChildSpec& s) : spec(s), exec(spec) {}
  ChildSpec spec;
  ExecArguments exec;
  Clock::time_point started;
  std::string start_error;
  ChildOutcome first;  // the outcome the watch starts with (unused)
  std::optional<ChildWatch> watch;
  bool alive = false;
  bool served = false;  // a request was sent
};

namespace {

// The outcome of a request to a session whose child does not run: why
// (`start_error`, when it never started).
ChildOutcome NotServing(const std::string& start_error) {
  ChildOutcome outcome;
  outcome.start_error = start_error.empty() ? "the child serves no more requests" : start_error;
  return outcome;
}

}  // namespace

ChildSession::ChildSession(const ChildSpec& spec) : impl_(std::make_unique<Impl>(spec)) {
  impl_->start_error = StartRefusal();
  if (!impl_->start_error.empty()) return;
  impl_->started = Clock::now();
  std::optional<Spawned> spawned =
      Spawn(impl_->spec, impl_->exec, &impl_->start_error, /*with_stdin=*/true);
  if (!spawned) return;
  impl_->watch.emplace(impl_->spec, impl_->started, *spawned, impl_->first);
  impl_->alive = true;
}

ChildSession::~ChildSession() {
  if (impl_->alive) Finish();
}

bool ChildSession::alive() const {
  return impl_->alive;
}

ChildOutcome ChildSession::Serve(const std::string& request, const ChildLineJudge& judge) {
  if (!impl_->alive) return NotServing(impl_->start_error);
  ChildOutcome outcome;
  ChildWatch& watch = *impl_->watch;
  // The child's start is its first request's.
  const Clock::time_point start = impl_->served ? Clock::now() : impl_->started;
  impl_->served = true;
  watch.Rebind(outcome, start);
  const std::string line = request + "\n";
  for (size_t sent = 0; sent < line.size() && watch.stdin_fd() >= 0;) {
    // Never SIGPIPE: a child that died is read to its end below.
    const ssize_t n =
        ::send(watch.stdin_fd(), line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  watch.JudgeLines(&judge);
  const bool ended = watch.Run();
  watch.JudgeLines(nullptr);
  if (ended) {
    outcome.started = true;
    outcome.stderr_tail = watch.tail().Finish();
    outcome.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return outcome;
  }
  watch.Finish();
  ConcludeOutcome(impl_->spec, start, watch, outcome);
  impl_->alive = false;
  return outcome;
}

ChildOutcome ChildSession::Finish() {
  if (!impl_->alive) return NotServing(impl_->start_error);
  ChildOutcome outcome;
  ChildWatch& watch = *impl_->watch;
  const Clock::time_point start = Clock::now();
  watch.Rebind(outcome, start);
  watch.CloseStdin();
  watch.Run();
  watch.Finish();
  ConcludeOutcome(impl_->spec, start, watch, outcome);
  impl_->alive = false;
  return outcome;
}

}  // namespace samebits::runner
