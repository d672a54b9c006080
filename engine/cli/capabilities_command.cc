// `samebits-engine capabilities`: one `capabilities` record (PROTOCOL.md)
// naming what this engine can never run on this machine, so a harness
// leaves those cells out of a default run instead of starting a child per
// cell to hear `unsupported` (the ISAs this build or CPU lacks: NEON on
// x86-64, AVX-512 on a CPU without it), and which synthetic checkpoints it
// knows.
#include <cstdio>
#include <memory>
#include <string>

#include "engine/cli/commands.h"
#include "engine/kernels/kernels.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/synthetic.h"
#include "engine/platform/machine.h"
#include "engine/protocol/records.h"

namespace samebits::cli {
namespace {

int RunCapabilities() {
  protocol::Capabilities capabilities;
  const std::string arch = platform::ThisMachine().arch;
  for (const kernels::IsaEntry& entry : kernels::Isas()) {
    if (kernels::IsaAvailable(entry.isa)) continue;
    capabilities.unavailable.push_back(
        {"isa", entry.name,
         std::string("this machine (") + arch + ") or this build lacks " + entry.name});
  }
  // The synthetic checkpoints `run --checkpoint synthetic:...` takes, so a
  // harness refuses a misspelt one before it starts any cell.
  capabilities.synthetic =
      protocol::SyntheticCheckpoints{model::SyntheticNames(), model::WeightTypeNames()};
  capabilities.serve = true;  // run --serve (serve.h)
  std::printf("%s\n", protocol::ToJsonLine(capabilities).c_str());
  return 0;
}

CommandSpec SetupCapabilities(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "capabilities",
      "Prints one `capabilities` record (JSON): the axis values this engine can never run on "
      "this machine (ISAs the build or the CPU lacks), each with the reason, and the synthetic "
      "checkpoints it knows.");
  return {sub, [] { return RunCapabilities(); }};
}

}  // namespace
SAMEBITS_REGISTER_COMMAND(capabilities, 40, SetupCapabilities);
}  // namespace samebits::cli
