// This machine's ISAs and description (machine.h).
#include "harness/runner/machine.h"

#include <unistd.h>

#include "engine/platform/machine.h"
#include "harness/analysis/machine_name.h"

namespace samebits::runner {

harness::MachineInfo LocalMachine() {
  return platform::ThisMachine();
}

std::string LocalMachineName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "";
  const std::string name = host;
  return harness::MachineNameProblem(name).empty() ? name : "";
}

}  // namespace samebits::runner
