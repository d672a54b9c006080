// A machine's name: how runs are selected by machine (`samebits runs
// --machine`, `samebits compare machine:A machine:B`, the machines a
// sharded gate's verdict compares). A run made here is named by the host
// (its hostname) or by `--machine-name`; a run stored before names existed,
// or from a bundle that carries none, is named after what it recorded of
// its machine (DescribedMachineName), so every run has a name.
#pragma once

#include <string>

#include "harness/analysis/results.h"

namespace samebits::harness {

// The longest machine name accepted.
inline constexpr size_t kMaxMachineNameLength = 100;

// Returns the name of a machine known only by its description: its
// architecture and 8 hex digits of the XXH3-64 of its architecture, CPU
// model and ISA features ("x86_64-3f9a12c4"). The kernel and the C library
// are left out so that the name survives an upgrade of either; two machines
// of one model share the name (they cannot be told apart by what was stored).
std::string DescribedMachineName(const MachineInfo& machine);

// Returns the run's machine name: `run.machine_name`, or when empty
// DescribedMachineName of its machine.
std::string MachineNameOf(const RunResult& run);

// Returns why `value` is not a label of kind `kind` ("machine name",
// "group id"), or "" when it is one: 1 to kMaxMachineNameLength letters,
// digits, '.', '_' and '-' (hostnames, CI runner labels and run ids fit;
// nothing that needs quoting or escaping).
std::string LabelProblem(const std::string& kind, const std::string& value);

// Returns why `name` is not a machine name ("" when it is one): LabelProblem.
std::string MachineNameProblem(const std::string& name);

}  // namespace samebits::harness
