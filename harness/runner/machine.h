// What the harness knows of this machine without asking a child: the ISAs
// it can run (from the engine's own kernel dispatch, so the harness and the
// engine agree on what "available" means) and a description used when no
// child said hello.
#pragma once

#include <string>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::runner {

// Returns the ISA names this machine and build can run ("scalar", "avx2", ...).
std::vector<std::string> MachineIsas();

// Returns this machine as the engine describes it (engine/platform's probe:
// uname, the C library, /proc/cpuinfo, the CPU features), so a run stored
// without any child's hello names the machine as a hello would. Children's
// hello records take precedence.
harness::MachineInfo LocalMachine();

// Returns this machine's name for its runs (harness/analysis/machine_name.h):
// its hostname, or "" when that is unknown or not a valid machine name (the
// run is then named after its machine's description).
std::string LocalMachineName();

}  // namespace samebits::runner
