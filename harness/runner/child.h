// Runs one child process the way the matrix needs it: an argv vector (never
// a shell), an environment built explicitly, stdout and stderr read
// concurrently (a chatty child cannot deadlock on a full pipe), a timeout
// that kills the child's whole process group, and an outcome that says what
// happened without ever throwing for anything the child did.
#pragma once

#include <cstddef>
#include <map>
#include <string>
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
  std::string stderr_tail;  // the last `stderr_tail_lines` lines
  double elapsed_ms = 0;
};

// Returns what the child did. The child runs in a process group of its own;
// on timeout the group is killed with SIGKILL, and after the child exits any
// process it left in its group is killed too, so nothing outlives the cell.
ChildOutcome RunChild(const ChildSpec& spec);

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
