// Loading a run named on the command line (run_operand.h).
#include "harness/cli/run_operand.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "harness/analysis/machine_name.h"
#include "harness/cli/commands.h"
#include "harness/cli/path_flags.h"
#include "harness/exchange/bundle.h"

namespace samebits::cli {
namespace {

// Returns whether `path` starts with SQLite's file header.
bool IsSqliteFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  return in && std::string(header, 15) == "SQLite format 3";
}

}  // namespace

RunOperand LoadRunOperand(const std::string& which, const std::string& db,
                          const exchange::BundleKey* verify) {
  if (which.starts_with(kMachinePrefix)) {
    const std::string machine = which.substr(kMachinePrefix.size());
    if (const std::string problem = harness::MachineNameProblem(machine); !problem.empty())
      throw UsageError("'" + which + "': " + problem);
    std::unique_ptr<store::Store> store = OpenStore(db);
    harness::RunResult run = LoadLatestRunOf(*store, machine);
    const std::string label = "machine " + machine + " (run " + std::to_string(run.run_id) + ")";
    return {std::move(run), label};
  }
  std::error_code ec;
  if (std::filesystem::is_regular_file(which, ec)) {
    if (IsSqliteFile(which)) {
      if (verify != nullptr)
        throw UsageError(which +
                         ": a database carries no signature, and --verify asks for one "
                         "(export its run with `samebits export --sign KEY`)");
      // A file's name, even one that reads as a connection string
      // ("host=a.db"), is a file here (store/location.h).
      const bool plain = which.front() == '/' || which.front() == '.';
      std::unique_ptr<store::Store> store = OpenStore(plain ? which : "./" + which);
      harness::RunResult run = LoadRunArgument(*store, "latest");
      const std::string label = "run " + std::to_string(run.run_id) + " of " + DisplayPath(which);
      return {std::move(run), label};
    }
    std::vector<harness::RunResult> runs =
        exchange::ReadBundle(which, exchange::kMaxBundleBytes, verify);
    if (runs.empty()) throw UsageError(which + ": the bundle holds no runs");
    return {std::move(runs.back()), "bundle " + DisplayPath(which)};
  }
  if (which != "latest" && which.find_first_not_of("0123456789") != std::string::npos)
    throw UsageError("'" + which +
                     "' is neither a file (a database or a bundle), a run id (a number or "
                     "`latest`) nor machine:NAME");
  std::unique_ptr<store::Store> store = OpenStore(db);
  harness::RunResult run = LoadRunArgument(*store, which);
  const std::string label =
      "run " + std::to_string(run.run_id) + (db.empty() ? std::string() : " of " + DisplayPath(db));
  return {std::move(run), label};
}

void AddRunOperands(CLI::App* sub, std::string& a, std::string& b, std::string& db, bool engines) {
  const std::string help =
      std::string(
          "A run id in the store (or latest), machine:NAME (the newest run of that "
          "machine in the store; `samebits runs` shows the names), a database file (its "
          "latest run), ") +
      (engines ? "a bundle from `samebits export` (its last run), or an engine to run: "
                 "engine:NAME (engines/NAME.json) or engine:FILE (a profile)."
               : "or a bundle from `samebits export` (its last run).");
  const char* type =
      engines ? "RUN|machine:NAME|DB|BUNDLE|engine:NAME" : "RUN|machine:NAME|DB|BUNDLE";
  Declare(sub->add_option("A", a, help)->type_name(type)->required(), PathRole::kInput);
  Declare(sub->add_option("B", b, help)->type_name(type)->required(), PathRole::kInput);
  Declare(AddStoreOption(sub, db, "Reads run ids from"), PathRole::kReadStore);
}

}  // namespace samebits::cli
