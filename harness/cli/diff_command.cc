// `samebits diff A B`: which cells and steps of two stored runs differ.
#include <cstdio>
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/cli/path_flags.h"
#include "harness/report/run_diff.h"

namespace samebits::cli {
namespace {

struct DiffFlags {
  std::string a, b;
  std::string db;
};

// Exits like diff(1): 0 identical, 1 different, 2 the runs could not be read
// or no cell had steps on both sides.
int Diff(const DiffFlags& flags) {
  std::unique_ptr<store::Store> store = OpenStore(flags.db, store::Access::kRead);
  const harness::RunResult a = LoadRunArgument(*store, flags.a);
  const harness::RunResult b = LoadRunArgument(*store, flags.b);
  const harness::report::RunDiff diff = harness::report::DiffRuns(a, b);
  harness::report::WriteRunDiffMarkdown(diff, a, b, std::cout);
  std::cout << std::flush;
  return diff.ExitCode();
}

CommandSpec SetupDiff(CLI::App& app) {
  auto flags = std::make_shared<DiffFlags>();
  CLI::App* sub = app.add_subcommand(
      "diff", "Shows which cells and steps of two stored runs differ, and where each first does.");
  sub->add_option("A", flags->a, "The first run: an id from `samebits runs`, or latest.")
      ->type_name("RUN")
      ->required();
  sub->add_option("B", flags->b, "The second run: an id from `samebits runs`, or latest.")
      ->type_name("RUN")
      ->required();
  Declare(AddStoreOption(sub, flags->db, "Reads"), PathRole::kReadStore);
  sub->footer(
      "Exit status: 0 when the runs' hashes are identical, 1 when they differ (other weights\n"
      "under one checkpoint name included), 2 on an error or when no cell has steps on both\n"
      "sides (a cell without output is never evidence of agreement).\n"
      "Examples:\n"
      "  samebits diff 11 12\n"
      "  samebits diff 3 latest --db /tmp/experiment.db");
  return {sub, [flags] { return Diff(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(diff, 65, SetupDiff);

}  // namespace samebits::cli
