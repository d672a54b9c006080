// `samebits history --cell CHECKPOINT/SCENARIO/CONFIG`: one cell's outputs
// over the stored runs, and since when it gives what it gives now
// (analysis/cell_history.h).
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "harness/analysis/cell_history.h"
#include "harness/cli/commands.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/path_flags.h"

namespace samebits::cli {
namespace {

struct HistoryFlags {
  std::string cell;
  std::string db;
  std::string machine;  // --machine: only this machine's runs
  int limit = 50;
};

int ShowHistory(const HistoryFlags& flags) {
  harness::CellKey key;
  try {
    key = harness::ParseCellKey(flags.cell);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--cell: ") + e.what());
  }
  std::unique_ptr<store::Store> store = OpenStore(flags.db, store::Access::kRead);
  if (!flags.machine.empty() && store->LatestRunIdOf(flags.machine) == 0) {
    throw UsageError(NoRunsOfMachineMessage(*store, flags.machine));
  }
  const harness::CellHistory history =
      harness::TraceCellHistory(key, store->CellHistory(key, flags.limit, flags.machine));
  const std::string text = harness::FormatCellHistory(history, GetPaths().program_display);
  if (history.entries.empty()) throw UsageError(text.substr(0, text.size() - 1));
  std::fputs(text.c_str(), stdout);
  return 0;
}

CommandSpec SetupHistory(CLI::App& app) {
  auto flags = std::make_shared<HistoryFlags>();
  CLI::App* sub = app.add_subcommand(
      "history",
      "Shows one cell's outputs over the stored runs, oldest first: which runs gave which "
      "output, where each change first differs and what changed with it, and since when the "
      "cell gives what it gives now (with the bisect that finds the commit, when a build "
      "changed).");
  sub->add_option("--cell", flags->cell,
                  "The cell: its checkpoint, scenario and configuration as `samebits show` "
                  "prints them, joined by '/' (the checkpoint may hold '/').")
      ->type_name("CHECKPOINT/SCENARIO/CONFIG")
      ->required();
  Declare(AddStoreOption(sub, flags->db, "Reads"), PathRole::kReadStore);
  sub->add_option("-n,--limit", flags->limit,
                  "Reads at most the newest N runs that hold the cell (default 50).")
      ->type_name("N")
      ->check(WholeNumberInRange(1, 1000000));
  sub->add_option("--machine", flags->machine,
                  "Reads only the runs of the machine of this name (`samebits runs` lists "
                  "them). A name no run has is an error that lists the names there are.")
      ->type_name("NAME")
      ->check(ValidMachineName());
  sub->footer(
      "Exit codes: 0 the history was printed; 2 no stored run holds the cell, or the store "
      "cannot be read.\n\n"
      "Examples:\n  samebits history --cell synthetic:tiny/classic/cpu-t2\n"
      "  samebits history --cell synthetic:small-moe/long/cpu-t4 --machine ci-arm64 -n 10");
  return {sub, [flags] { return ShowHistory(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(history, 45, SetupHistory);

}  // namespace samebits::cli
