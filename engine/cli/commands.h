// The samebits-engine subcommands and what they share. The registry is the
// one the `samebits` program uses too (engine/program/command_registry.h),
// so a subcommand is written one way in both programs.
//
// Adding a subcommand: create engine/cli/<name>_command.cc, add it to the
// program's source list in engine/CMakeLists.txt, and define in it
//
//   namespace samebits::cli {
//   namespace {
//   struct ListOptions {  // the parsed values
//     bool names_only = false;
//   };
//   int RunList(const ListOptions& options) { ...; return 0; }  // the exit code
//   CommandSpec SetupList(CLI::App& app) {
//     CLI::App* sub = app.add_subcommand("list", "Lists the synthetic checkpoints.");
//     auto options = std::make_shared<ListOptions>();
//     sub->add_flag("--names", options->names_only, "Print only the checkpoint specs.");
//     return {sub, [options] { return RunList(*options); }};
//   }
//   }  // namespace
//   SAMEBITS_REGISTER_COMMAND(list, 30, SetupList);
//   }  // namespace samebits::cli
//
// The number orders `samebits-engine --help` (run 10, describe 20, list 30,
// bench 40, export 50). The main function (engine_main.cc) parses, calls the
// chosen command's action and prints every error in one place: UsageError
// exits with 2, any other exception with 1.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/model/weights.h"
#include "engine/program/command_registry.h"

namespace samebits::cli {

// Bad arguments or bad input (a scenario, a checkpoint spec, an ISA this
// machine lacks): the program exits with 2. Any other exception exits with 1.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// This configuration or checkpoint cannot run here (an ISA the machine or
// the build lacks): a protocol subcommand reports it with an `unsupported`
// record (PROTOCOL.md), not an `error`; the program exits with 2.
class UnsupportedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CommandSpec {
  CLI::App* subcommand = nullptr;
  std::function<int()> run;  // called when `subcommand` was given
  // True when failures must also be reported as a protocol `error` record
  // on stdout (the `run` subcommand, which a harness reads).
  bool speaks_protocol = false;
};
using CommandSetup = CommandSpec (*)(CLI::App& app);

// The registry is the one both programs use (engine/program/command_registry.h).
using RegisteredCommand = program::RegisteredCommand<CommandSpec>;

// Returns the registered subcommands, sorted by order, then name.
inline std::vector<RegisteredCommand> RegisteredCommands() {
  return program::RegisteredCommands<CommandSpec>();
}

// Returns the checkpoint `spec` names (formats::LoadCheckpoint). Throws
// UsageError with the loader's message when it cannot be loaded, so every
// subcommand reports a bad checkpoint the same way (exit 2).
model::ModelWeights LoadCheckpointForCommand(const std::string& spec);

// Makes LoadCheckpointForCommand keep, for the rest of the process, the last
// synthetic checkpoint it loaded, and return it again while the same spec is
// asked for (`run --serve`: the cells of one checkpoint load it once). A
// synthetic checkpoint's weights are a function of its spec and this build
// alone, so the kept one is bit for bit what a new load would give; files
// are always read again.
void KeepLastSyntheticCheckpoint();

// Returns model::HashWeights(weights), computed once for a kept checkpoint.
std::string WeightsHashForCommand(const model::ModelWeights& weights);

// Returns true when the environment asks for the op profiler
// (SAMEBITS_PROFILE=1), which `run` and `bench` treat as `--profile`.
bool ProfileRequestedByEnvironment();

// Returns the kernel table the cpu pass of `run` and `bench` computes with:
// kernels::GetKernelTable(isa), or, when the environment sets
// SAMEBITS_TEST_ONLY_BREAK_IDENTITY=1, the test-only table whose attention
// breaks the contract's order (the identity tests' negative control, which
// must run the real program); a warning on stderr says so.
const kernels::KernelTable& CpuPassKernelTable(kernels::Isa isa, numerics::QuantDot quant_dot);

// Returns the kernel table the cpu pass's matrix units use in calls holding
// rows of several sequences (`run --batch`): `single` (the table above), or,
// when the environment sets SAMEBITS_TEST_ONLY_BREAK_BATCH_INVARIANCE=1, the
// test-only table whose reduction is split across k (the batch-invariance
// negative control: unbatched calls stay exact, batched ones differ); a
// warning on stderr says so.
const kernels::KernelTable& CpuPassMultiSequenceKernelTable(kernels::Isa isa,
                                                            const kernels::KernelTable& single);

}  // namespace samebits::cli
