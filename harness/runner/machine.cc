// This machine's ISAs and description (machine.h).
#include "harness/runner/machine.h"

#include <sys/utsname.h>

#include <fstream>

#include "engine/kernels/kernels.h"

namespace samebits::runner {

std::vector<std::string> MachineIsas() {
  std::vector<std::string> names;
  for (kernels::Isa isa : kernels::AvailableIsas()) names.push_back(kernels::IsaName(isa));
  return names;
}

harness::MachineInfo LocalMachine() {
  harness::MachineInfo m;
  struct utsname u {};
  if (::uname(&u) == 0) {
    m.arch = u.machine;
    m.os = u.sysname;
    m.kernel = u.release;
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) m.cpu = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  }
  if (m.cpu.empty()) m.cpu = "unknown";
  m.isa_features = kernels::CpuFeatures();
  return m;
}

}  // namespace samebits::runner
