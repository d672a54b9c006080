// The `samebits` subcommands and what they share.
//
// Adding a subcommand (this is how `report` and `diff` are added): create
// one file harness/cli/<name>_command.cc, listed in the program's sources
// (harness/CMakeLists.txt), that defines
//
//   namespace samebits::cli {
//   namespace {
//   CommandSpec SetupReport(CLI::App& app) {
//     CLI::App* sub = app.add_subcommand("report", "Writes a report of a stored run.");
//     auto options = std::make_shared<ReportOptions>();   // the parsed values
//     sub->add_option("RUN", options->run, "...")->type_name("ID");
//     sub->footer("Examples:\n  samebits report latest --format html -o reports/run.html");
//     return {sub, [options] { ...; return 0; }};  // the exit code
//   }
//   }  // namespace
//   SAMEBITS_REGISTER_COMMAND(report, 60, SetupReport);
//   }  // namespace samebits::cli
//
// The number orders `samebits --help` (run 10, gate 20, reference 30,
// runs 40, show 50). The action returns the exit code: 0 success, 1 a
// failed check, 2 the command could not be carried out. Throw UsageError
// (or any std::exception) for the last: main prints "samebits: error: ..."
// in one place and exits 2. Helpers below give the project's paths, open
// the store and load a run by id or `latest`.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/program/command_registry.h"
#include "harness/analysis/results.h"
#include "harness/runner/display_path.h"
#include "harness/store/store.h"

namespace samebits::cli {

// A command line that cannot be carried out (exit 2).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CommandSpec {
  CLI::App* subcommand = nullptr;
  std::function<int()> run;  // called when `subcommand` was given
};
using CommandSetup = CommandSpec (*)(CLI::App& app);

// The registry is the one both programs use (engine/program/command_registry.h).
using RegisteredCommand = program::RegisteredCommand<CommandSpec>;

// Returns the registered subcommands, sorted by order, then name.
inline std::vector<RegisteredCommand> RegisteredCommands() {
  return program::RegisteredCommands<CommandSpec>();
}

// Where things are. The project root is found from the program's location
// (build/bin/samebits -> ../..) when that folder holds scenarios/ or
// references/, else the current directory.
struct Paths {
  std::string program;          // this program, absolute
  std::string program_display;  // how to print it in commands ("build/bin/samebits")
  std::string root;             // the project root
  std::string engine;           // the default engine: samebits-engine next to this program
  std::string scenarios;        // <root>/scenarios
  std::string references;       // <root>/references
  std::string db;               // <root>/.samebits/samebits.db
  std::string reports;          // <root>/reports
};
const Paths& GetPaths();

// Paths in messages: relative to the current directory when below it.
using runner::DisplayPath;

// Returns the command line this process was started with, quoted for a
// shell, every store location in it redacted (store::RedactArgument): it is
// stored with each run, printed and exported in bundles.
const std::string& CommandLine();

// Returns `s` quoted for a POSIX shell (as is when nothing needs quoting).
std::string ShellQuote(const std::string& s);
void SetCommandLine(int argc, char** argv);

// Returns the path of the store named by `db_path` (empty: the default).
std::string StorePath(const std::string& db_path);

// Returns the folder where files that go with the store named by `db_path`
// are kept (dumps, build caches): the SQLite file's folder, or the default
// store's folder (.samebits/ under the project root) for a server.
std::string StoreSideFolder(const std::string& db_path);

// Returns the store at `db_path` (empty: the default), created on first use.
// Commands that only read pass store::Access::kRead (store.h).
std::unique_ptr<store::Store> OpenStore(const std::string& db_path,
                                        store::Access access = store::Access::kReadWrite);

// Returns the run named by `which` ("latest" or an id). Throws UsageError.
harness::RunResult LoadRunArgument(store::Store& store, const std::string& which);

// Returns the message for a machine name no run of `store` has, listing
// the names there are.
std::string NoRunsOfMachineMessage(store::Store& store, const std::string& machine);

// Returns the newest run of the machine named `machine`. Throws UsageError
// (NoRunsOfMachineMessage) when it has none.
harness::RunResult LoadLatestRunOf(store::Store& store, const std::string& machine);

}  // namespace samebits::cli
