// What the harness knows of this machine without asking a child: a
// description used when no child said hello, and its name. What an engine
// can run here (its ISAs) is the engine's to say, in its `capabilities`
// probe (unavailable.h), not the harness's.
#pragma once

#include <string>

#include "harness/analysis/results.h"

namespace samebits::runner {

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
