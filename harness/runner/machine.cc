// This machine's ISAs and description (machine.h).
#include "harness/runner/machine.h"

#include "engine/kernels/kernels.h"
#include "engine/platform/machine.h"

namespace samebits::runner {

std::vector<std::string> MachineIsas() {
  std::vector<std::string> names;
  for (kernels::Isa isa : kernels::AvailableIsas()) names.push_back(kernels::IsaName(isa));
  return names;
}

harness::MachineInfo LocalMachine() {
  return platform::ThisMachine();
}

}  // namespace samebits::runner
