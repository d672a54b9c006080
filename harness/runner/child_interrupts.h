// Interrupts and the engines running now (child.h's Interrupted,
// DeferInterrupts, InterruptCleanup): the process groups of the running
// engines, so that a harness interrupted by SIGINT, SIGTERM or SIGHUP
// (Ctrl-C, a CI job's cancel) takes them with it, and whether a child may
// still start. Used by child.cc only.
#pragma once

#include <sys/types.h>

#include <string>

namespace samebits::runner {

// Installs the interrupt handlers (once) and returns why no child may start
// now: after an interrupt, unless an InterruptCleanup is alive, "not
// started: the command was interrupted"; otherwise "".
std::string StartRefusal();

// Records the process group `pid` leads as running, so an interrupt kills
// it. Returns its slot, or -1 when every slot is taken (then only its
// deadline kills it).
int TrackEngineGroup(pid_t pid);

// Forgets the group of `slot` (a slot from TrackEngineGroup, or -1).
void UntrackEngineGroup(int slot);

}  // namespace samebits::runner
