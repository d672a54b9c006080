// The supervisor of one child (child.cc): a process forked from the
// harness, which makes itself a child subreaper
// (prctl(PR_SET_CHILD_SUBREAPER)) and forks the engine. Whatever the engine
// starts and leaves behind, even in a session of its own (setsid), becomes
// the supervisor's child when its parent dies: after the engine exits, the
// supervisor kills and reaps every such process and reports it on its report
// pipe, a line each ("engine PID", "status STATUS", "exec-error ERRNO", ...).
//
// The supervisor runs in a fork of a multithreaded process without exec:
// it only makes system calls (no allocation, no locks, no stdio).
#pragma once

namespace samebits::runner {

struct SpawnPlan {
  const char* program;
  char* const* argv;
  char* const* envp;
  int out_write, err_write, report_write;
  int in_read;  // the engine's stdin; -1: /dev/null
};

// Runs the supervisor in the process forked for it: forks the engine (its
// own process group, `plan`'s descriptors as its stdin, stdout and stderr,
// then exec), reports its id and wait status, then kills and reports
// whatever it left running, and exits.
[[noreturn]] void Supervise(const SpawnPlan& plan);

}  // namespace samebits::runner
