// `samebits runs` and `samebits show RUN`: the stored runs.
#include <cstdio>
#include <memory>

#include "harness/analysis/summary.h"
#include "harness/analysis/terminal_text.h"
#include "harness/cli/commands.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/path_flags.h"

namespace samebits::cli {
namespace {

struct RunsFlags {
  std::string db;
  std::string machine;  // --machine: only this machine's runs
  int limit = 20;
  std::string run = "latest";
  bool steps = false;
};

int ListRuns(const RunsFlags& flags) {
  std::unique_ptr<store::Store> store = OpenStore(flags.db, store::Access::kRead);
  const std::vector<store::RunSummary> runs = store->ListRuns(flags.limit, flags.machine);
  if (runs.empty() && !flags.machine.empty()) {
    throw UsageError(NoRunsOfMachineMessage(*store, flags.machine));
  }
  if (runs.empty()) {
    std::printf("no runs yet (make one with `samebits run`)\n");
    return 0;
  }
  std::printf("%6s  %-20s  %-9s  %8s  %-16s  %s\n", "RUN", "STARTED", "STATUS", "SECONDS",
              "MACHINE", "CELLS");
  for (const store::RunSummary& r : runs) {
    std::string counts;
    for (const auto& [code, n] : r.counts)
      counts += (counts.empty() ? "" : ", ") + code + " " + std::to_string(n);
    std::printf("%6lld  %-20s  %-9s  %8.1f  %-16s  %s\n", static_cast<long long>(r.id),
                r.started_at.c_str(), r.status.c_str(), r.elapsed_ms / 1000.0,
                r.machine_name.c_str(), counts.c_str());
    if (!r.headline.empty()) {
      std::printf("        %s\n", harness::TerminalSafe(r.headline).c_str());
    }
  }
  return 0;
}

int ShowRun(const RunsFlags& flags) {
  std::unique_ptr<store::Store> store = OpenStore(flags.db, store::Access::kRead);
  const harness::RunResult run = LoadRunArgument(*store, flags.run);
  std::printf("%s", harness::FormatRunDetails(run, flags.steps).c_str());
  return 0;
}

CommandSpec SetupRuns(CLI::App& app) {
  auto flags = std::make_shared<RunsFlags>();
  CLI::App* sub = app.add_subcommand("runs", "Lists the stored runs, newest first.");
  Declare(AddStoreOption(sub, flags->db, "Reads"), PathRole::kReadStore);
  sub->add_option("-n,--limit", flags->limit, "Lists at most N runs (default 20).")
      ->type_name("N")
      ->check(WholeNumberInRange(1, 1000000));
  sub->add_option("--machine", flags->machine,
                  "Lists only the runs of the machine of this name (the MACHINE column; "
                  "`samebits run --machine-name`, else the host's name). A name no run has is an "
                  "error that lists the names there are.")
      ->type_name("NAME")
      ->check(ValidMachineName());
  sub->footer(
      "Examples:\n  samebits runs\n  samebits runs -n 5 --db /tmp/experiment.db\n"
      "  samebits runs --machine ci-arm64 --db postgresql://ci@db.example/samebits");
  return {sub, [flags] { return ListRuns(*flags); }};
}

CommandSpec SetupShow(CLI::App& app) {
  auto flags = std::make_shared<RunsFlags>();
  CLI::App* sub =
      app.add_subcommand("show", "Prints one stored run: its machine, configurations and results.");
  sub->add_option("RUN", flags->run, "The run to show: an id from `samebits runs`, or latest.")
      ->type_name("RUN");
  Declare(AddStoreOption(sub, flags->db, "Reads"), PathRole::kReadStore);
  sub->add_flag("--steps", flags->steps, "Also prints every step's tokens and hashes.");
  sub->footer("Examples:\n  samebits show latest\n  samebits show 12 --steps");
  return {sub, [flags] { return ShowRun(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(runs, 40, SetupRuns);
SAMEBITS_REGISTER_COMMAND(show, 50, SetupShow);

}  // namespace samebits::cli
