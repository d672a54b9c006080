// The samebits-engine subcommands. Each lives in its own file
// (run_command.cc, describe_command.cc, list_command.cc, ...) and registers
// itself at start-up, so a new subcommand is added by adding one file:
//
//   namespace {
//   class BenchCommand : public Command {
//     void Define(CLI::App& sub) override { /* sub.add_option(...) */ }
//     int Execute() override { /* ...; return 0; */ }
//   };
//   const bool kRegistered = RegisterCommand(
//       {"bench", "Times a scenario.", 40, [] { return MakeCommand<BenchCommand>(); }});
//   }  // namespace
//
// engine/CMakeLists.txt globs engine/cli/*.cc, so nothing else changes. The
// main function (engine_main.cc) parses, then calls the chosen command's
// `Execute`, and prints every error in one place.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/model/weights.h"

namespace samebits::cli {

// Bad arguments or bad input (a scenario, a checkpoint spec, an ISA this
// machine lacks): the program exits with 2. Any other exception exits with 1.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Command {
 public:
  virtual ~Command() = default;
  // Declares the subcommand's options on `sub`, bound to members.
  virtual void Define(CLI::App& sub) = 0;
  // Runs the subcommand after a successful parse. Returns the exit code;
  // throws UsageError or another exception on failure.
  virtual int Execute() = 0;
  // Returns true when failures must also be reported as a protocol `error`
  // record on stdout (the `run` subcommand, which a harness reads).
  virtual bool SpeaksProtocol() const { return false; }
};

struct CommandInfo {
  std::string name;
  std::string description;  // one sentence, shown by --help
  int order = 0;            // position in --help, lowest first
  std::function<std::unique_ptr<Command>()> make;
};

// Adds a subcommand. Returns true, so that a file can register from a
// namespace-scope initializer.
bool RegisterCommand(CommandInfo info);

// Returns every registered subcommand, sorted by `order`, then name.
std::vector<CommandInfo> RegisteredCommands();

// Returns the checkpoint `spec` names (formats::LoadCheckpoint). Throws
// UsageError with the loader's message when it cannot be loaded, so every
// subcommand reports a bad checkpoint the same way (exit 2).
model::ModelWeights LoadCheckpointForCommand(const std::string& spec);

// Returns true when the environment asks for the op profiler
// (SAMEBITS_PROFILE=1), which `run` and `bench` treat as `--profile`.
bool ProfileRequestedByEnvironment();

// Returns the kernel table the cpu pass of `run` and `bench` computes with:
// kernels::GetKernelTable(isa), or, when the environment sets
// SAMEBITS_TEST_ONLY_BREAK_IDENTITY=1, the test-only table whose attention
// breaks the contract's order (the identity tests' negative control, which
// must run the real program); a warning on stderr says so.
const kernels::KernelTable& CpuPassKernelTable(kernels::Isa isa);

template <typename T>
std::unique_ptr<Command> MakeCommand() {
  return std::make_unique<T>();
}

}  // namespace samebits::cli
