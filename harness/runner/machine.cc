// This machine's ISAs and description (machine.h).
#include "harness/runner/machine.h"

#include <utility>

#include "engine/kernels/kernels.h"
#include "engine/platform/machine.h"

namespace samebits::runner {

std::vector<std::string> MachineIsas() {
  std::vector<std::string> names;
  for (kernels::Isa isa : kernels::AvailableIsas()) names.push_back(kernels::IsaName(isa));
  return names;
}

harness::MachineInfo LocalMachine() {
  platform::Machine probed = platform::ThisMachine();
  harness::MachineInfo m;
  m.arch = std::move(probed.arch);
  m.cpu = std::move(probed.cpu);
  m.os = std::move(probed.os);
  m.kernel = std::move(probed.kernel);
  m.libc = std::move(probed.libc);
  m.isa_features = std::move(probed.isa_features);
  return m;
}

}  // namespace samebits::runner
