// Machine names (machine_name.h).
#include "harness/analysis/machine_name.h"

#include <xxhash.h>

#include "engine/numerics/hash.h"

namespace samebits::harness {
namespace {

// Returns whether `c` may appear in a machine name.
bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

}  // namespace

std::string DescribedMachineName(const MachineInfo& machine) {
  // One field a line: no field holds a newline (they come from uname,
  // /proc/cpuinfo and the CPU probe), so the text is unambiguous.
  std::string text = machine.arch + "\n" + machine.cpu + "\n";
  for (const std::string& feature : machine.isa_features) text += feature + " ";
  const std::string hash = numerics::Hex16(XXH3_64bits(text.data(), text.size())).substr(0, 8);
  std::string arch;
  for (char c : machine.arch) arch += IsNameChar(c) ? c : '_';
  if (arch.empty()) arch = "unknown";
  return arch.substr(0, kMaxMachineNameLength - 9) + "-" + hash;
}

std::string MachineNameOf(const RunResult& run) {
  return run.machine_name.empty() ? DescribedMachineName(run.machine) : run.machine_name;
}

std::string LabelProblem(const std::string& kind, const std::string& value) {
  if (value.empty()) return "a " + kind + " cannot be empty";
  if (value.size() > kMaxMachineNameLength)
    return "a " + kind + " has at most " + std::to_string(kMaxMachineNameLength) +
           " characters, '" + value.substr(0, 20) + "...' has " + std::to_string(value.size());
  for (char c : value) {
    if (!IsNameChar(c))
      return kind + " '" + value +
             "' may hold only letters, digits, '.', '_' and '-' (like a hostname)";
  }
  return "";
}

std::string MachineNameProblem(const std::string& name) {
  return LabelProblem("machine name", name);
}

}  // namespace samebits::harness
