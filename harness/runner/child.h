// Runs one child process the way the matrix needs it: an argv vector (never
// a shell), an environment built explicitly, stdout and stderr read
// concurrently (a chatty child cannot deadlock on a full pipe), a deadline
// that bounds every wait (the child's exit and every read), the collection
// of whatever the child leaves running, and an outcome that says what
// happened without ever throwing for anything the child did.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace samebits::runner {

struct ChildSpec {
  std::string program;            // a path; never looked up through a shell
  std::vector<std::string> args;  // argv[1...]
  // The child's whole environment (see ChildEnvironment).
  std::map<std::string, std::string> env;
  double timeout_seconds = 60;  // <= 0: no timeout
  size_t stderr_tail_lines = 20;
  // Stdout past this many bytes is dropped and reported (a runaway child
  // must not exhaust the harness's memory).
  size_t max_stdout_bytes = size_t{256} << 20;
};

struct ChildOutcome {
  bool started = false;
  std::string start_error;  // why it could not be started
  bool timed_out = false;
  int exit_code = 0;  // when it exited
  int signal = 0;     // non-zero when a signal ended it
  std::string stdout_text;
  bool stdout_truncated = false;
  // When stdout's bytes arrived: after each read, the bytes kept so far
  // and the milliseconds since the child was started (ArrivalMs).
  std::vector<std::pair<size_t, double>> stdout_arrivals;
  std::string stderr_tail;  // the last `stderr_tail_lines` lines
  double elapsed_ms = 0;
  // The processes the child left running when it ended ("sleep (pid 12)"),
  // all killed since.
  std::vector<std::string> left_running;
  // The child's stdout or stderr was still held open by a process outside
  // its tree when the harness stopped reading.
  bool output_held_open = false;
};

// Returns what the child did. The child runs in a process group of its own
// under a supervisor that is a child subreaper (Linux): on timeout the group
// is killed with SIGKILL, and after the child exits every process it left
// behind (in its group or not, even in a new session) is killed and listed
// in `left_running`, so nothing outlives the cell. No wait lasts more than
// a two-second grace past `timeout_seconds`.
ChildOutcome RunChild(const ChildSpec& spec);

// What a session does after a whole line of a request's stdout (without
// its newline): read on, end the request there (the child stays, waiting
// for the next), or give the rest of the child's life to this request (its
// stdin is closed and it is read to its end: a line that can never pass).
enum class ChildLine { kMore, kEndsRequest, kBreaksRequest };
using ChildLineJudge = std::function<ChildLine(std::string_view line)>;

// One child that answers several requests in turn on its stdin (an engine
// serving several cells, PROTOCOL.md "Serving several cells"), run as
// RunChild runs one: its own process group under a subreaper supervisor,
// stdout and stderr read against a deadline, nothing left running. Each
// request gets an outcome of its own; `spec.timeout_seconds` bounds each.
class ChildSession {
 public:
  // Starts the child, its stdin a socket the session writes requests to.
  explicit ChildSession(const ChildSpec& spec);
  ~ChildSession();  // finishes the child when it still runs
  ChildSession(const ChildSession&) = delete;
  ChildSession& operator=(const ChildSession&) = delete;

  // Whether the child runs and can be sent a request.
  bool alive() const;

  // Writes `request` and a newline to the child's stdin and reads until a
  // line `judge` says ends the request, the child ends or the deadline
  // passes. Returns the request's outcome: what the child printed from the
  // request on (stdout, arrivals timed from the request, or from the
  // child's start for its first request; the stderr of that time), exit
  // code 0 while the child runs; when it ended (or was killed at the
  // deadline) during the request, how, as RunChild says it, and the
  // session is over. Bytes printed after the line that ended a request go
  // to the next request's stdout.
  ChildOutcome Serve(const std::string& request, const ChildLineJudge& judge);

  // Closes the child's stdin and reads it to its end. Returns what it
  // printed after the last request ended, how it ended and what it left
  // running; `elapsed_ms` is the time from the close to its end.
  ChildOutcome Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What a command that must clean up after itself (bisect: its git
// worktree, its record) sees of SIGINT, SIGTERM and SIGHUP. By default the
// first such signal kills every running child's process group and ends the
// program at once. After DeferInterrupts, the first one kills the running
// children and is remembered instead: no new child starts (RunChild
// reports it as not started) except inside an InterruptCleanup, and the
// command, at its next check (ThrowIfInterrupted), unwinds, cleans up and
// ends by the same signal. A second signal ends the program at once.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Makes interrupts deferred for the rest of the process.
void DeferInterrupts();

// Returns the deferred signal received, or 0.
int InterruptSignal();

// Throws Interrupted when a deferred signal was received.
void ThrowIfInterrupted();

// While one is alive, children start even after a deferred interrupt (the
// clean-up's own git commands).
class InterruptCleanup {
 public:
  InterruptCleanup();
  ~InterruptCleanup();
  InterruptCleanup(const InterruptCleanup&) = delete;
  InterruptCleanup& operator=(const InterruptCleanup&) = delete;
};

// Returns the milliseconds from the child's start to the arrival of the
// stdout byte at `offset`, or -1 when it never arrived.
double ArrivalMs(const ChildOutcome& outcome, size_t offset);

// Returns the names passed through by default.
const std::vector<std::string>& DefaultPassthrough();

// Returns the environment for a child: only the variables named in
// `passthrough` that are set in this process (by default PATH, LD_PRELOAD,
// LD_LIBRARY_PATH, TMPDIR, HOME), then LC_ALL=C, then `explicit_vars`, which
// win. Nothing else from the harness's environment reaches a child, so a
// stray SAMEBITS_* variable in a shell cannot change a result.
std::map<std::string, std::string> ChildEnvironment(
    const std::map<std::string, std::string>& explicit_vars,
    const std::vector<std::string>& passthrough = DefaultPassthrough());

}  // namespace samebits::runner
