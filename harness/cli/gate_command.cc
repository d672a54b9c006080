// `samebits gate`: runs the matrix (or takes a stored run), checks it against
// itself and the references, diagnoses any difference, and exits 0 only
// when everything agrees.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "harness/analysis/shard.h"
#include "harness/analysis/summary.h"
#include "harness/analysis/terminal_text.h"
#include "harness/analysis/verdict.h"
#include "harness/cli/commands.h"
#include "harness/cli/matrix_flags.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/path_flags.h"
#include "harness/cli/report_flags.h"
#include "harness/cli/run_timing.h"
#include "harness/runner/rerun.h"
#include "harness/runner/run_error.h"
#include "harness/runner/unavailable.h"
#include "harness/runner/unstored_run.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;

// The largest --rerun-budget accepted (a day): beyond it a typo, not a plan.
constexpr double kMaxRerunBudgetSeconds = 24 * 3600;

struct GateFlags {
  MatrixFlags matrix;
  std::string run;  // a stored run instead of a new one
  bool trace = false;
  bool quiet = false;
  bool verbose = false;
  double rerun_budget_seconds = runner::kDefaultRerunBudgetSeconds;
  ReportFlags reports;
  std::string shard;  // --shard K/N: this machine's share of a sharded gate
  std::string group;  // --group ID: the sharded gate's group
};

// Keeps this shard's share of `selected` (shard.h), says how much it is,
// and returns the shard.
harness::ShardInfo KeepShard(const GateFlags& flags, std::vector<runner::Cell>& selected) {
  harness::ShardSpec spec;
  const std::string problem = harness::ParseShardSpec(flags.shard, &spec);
  if (!problem.empty()) throw UsageError(problem);  // checked at parse time too
  const size_t all = selected.size();
  selected = harness::CellsOfShard(selected, spec);
  std::printf("Shard %d/%d of group %s: %zu of the %zu selected cells.\n", spec.index, spec.count,
              flags.group.c_str(), selected.size(), all);
  return {flags.group, spec.index, spec.count};
}

int Gate(const GateFlags& flags) {
  const runner::MatrixRunOptions options = RunOptionsFor(flags.matrix);
  const bool fresh = flags.run.empty();
  // Checked before the matrix runs: a store that cannot take the run fails now.
  std::unique_ptr<store::Store> store =
      OpenStore(flags.matrix.db, fresh ? store::Access::kReadWrite : store::Access::kRead);
  harness::RunResult run;
  // A new run's dumps (its own and the reruns') go when the store does not
  // take it, on every way out; a stored run's files are the store's.
  std::optional<runner::UnstoredRunFiles> unstored;
  if (fresh) unstored.emplace(run, options.selection.root);
  std::vector<runner::Cell> selected;
  std::vector<std::string> left_out;  // what the engine can never run here
  if (fresh) {
    selected = runner::SelectRunnableCells(options, &left_out);
    std::optional<harness::ShardInfo> shard;
    if (!flags.shard.empty()) shard = KeepShard(flags, selected);
    run = runner::RunMatrix(options, selected, /*trace=*/false, flags.quiet);
    run.shard = shard;
    runner::RefuseUnrunnableSelection(run);
  } else {
    run = LoadRunArgument(*store, flags.run);
    if (run.cells.empty()) throw UsageError("run " + flags.run + " has no cells");
    try {
      // What the flags select now tells reruns where a stored suite cell's
      // scenario and checkpoint files are.
      selected = runner::SelectCells(options.selection);
    } catch (const runner::RunError&) {
    }
  }
  runner::JudgeWithReruns(run, JudgeOptionsFor(run, flags.matrix), options, selected, flags.trace,
                          flags.quiet, flags.rerun_budget_seconds);
  if (fresh) {
    run.run_id = SaveRunTimed(*store, run);
    unstored->Stored();
  }
  std::printf("%s", harness::FormatSummary(run, /*diagnose=*/true).c_str());
  for (const std::string& note : left_out) std::printf("%s\n", note.c_str());
  PrintTimeSplit(run, flags.verbose);
  WriteReports(flags.reports, [&](const std::string& format, const std::string& path) {
    WriteRunReportFile(run, format, path);
  });
  // A shard that holds none of the selected cells is stored (the verdict
  // counts it in) and is not a failure: the other shards hold the cells.
  if (run.shard && run.cells.empty()) return 0;
  return harness::GateExitCode(harness::RunVerdict(run));
}

CommandSpec SetupGate(CLI::App& app) {
  auto flags = std::make_shared<GateFlags>();
  CLI::App* sub = app.add_subcommand(
      "gate",
      "Runs the matrix (or takes a stored run) and checks that every configuration agrees with "
      "the others and with the committed references; diagnoses any difference.");
  AddMatrixFlags(sub, &flags->matrix);
  AddDumpFlag(sub, &flags->matrix);
  AddMachineNameFlag(sub, &flags->matrix);
  RequireExistingReferencesDir(sub);
  sub->add_option("--run", flags->run,
                  "Judges this stored run (an id, or `latest`) instead of making a new one.")
      ->type_name("ID");
  sub->add_flag("--trace", flags->trace,
                "When configurations disagree, reruns the diverging pairs with activation traces "
                "to name the first diverging layer and op. (Without --trace the pairs are still "
                "rerun for raw logit dumps, unless the run has them, so the report gives ULP "
                "distances and whether the argmax changed.)");
  sub->add_option("--rerun-budget", flags->rerun_budget_seconds,
                  "The most time the gate spends rerunning diverging pairs with logit dumps (and "
                  "traces): one pair per diverging configuration first, then the others; the first "
                  "pair always runs, and a pair begun within the budget finishes. The summary and "
                  "the reports name the pairs "
                  "left out (default " +
                      std::to_string(static_cast<int>(runner::kDefaultRerunBudgetSeconds)) + ").")
      ->type_name("SECONDS")
      ->check(SecondsInRange(kMaxRerunBudgetSeconds));
  sub->add_flag("-q,--quiet", flags->quiet, "Prints no progress, only the summary.");
  AddVerboseFlag(sub, &flags->verbose);
  CLI::Option* group =
      sub->add_option(
             "--group", flags->group,
             "With --shard: the group the shards of one sharded gate share (a CI run's id, "
             "say), under which `samebits verdict --group ID` finds them.")
          ->type_name("ID")
          ->check(CLI::Validator(
              [](std::string& value) -> std::string { return harness::ShardGroupProblem(value); },
              ""));
  sub->add_option("--shard", flags->shard,
                  "Runs only shard K of N of the selected cells (1 <= K <= N), chosen by a hash of "
                  "each cell's checkpoint, scenario and configuration, so every machine splits "
                  "the same way and adding a checkpoint moves no cell; the run is stored under "
                  "--group with its K/N for `samebits verdict`.")
      ->type_name("K/N")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            harness::ShardSpec spec;
            return harness::ParseShardSpec(value, &spec);
          },
          ""))
      ->needs(group)
      ->excludes("--run");
  group->needs("--shard");
  AddReportFlags(sub, flags->reports, "the run");
  sub->footer(
      "Exit codes:\n"
      "  0  every configuration agrees with the others and with the reference\n"
      "  1  they do not, or a child crashed, hung or broke the protocol (the report and\n"
      "     the summary say which and where)\n"
      "  2  the gate could not be carried out: bad arguments, a selection that runs nothing\n"
      "     (no such scenario, or the engine refused every cell: an unknown checkpoint),\n"
      "     an unreadable database or reference\n\n"
      "When configurations disagree, the gate reruns the diverging pairs with --dump-logits\n"
      "(and --trace when given), one per diverging configuration first, within\n"
      "--rerun-budget; so its reports give ULP, absolute and relative differences, whether\n"
      "the argmax changed, and with --trace the first diverging layer and op.\n\n"
      "Examples:\n"
      "  samebits gate --report-html reports/latest.html --report-md reports/latest.md\n"
      "  samebits gate --checkpoint synthetic:tiny --scenario classic --trace\n"
      "  samebits gate --suite scenarios/real/suite.json --config reference,cpu-t2\n"
      "  samebits gate --quant-dot exact,int8 --checkpoint synthetic:medium-q4_k\n"
      "  samebits gate --run latest\n"
      "  samebits gate --shard 2/4 --group \"$GITHUB_RUN_ID\" --machine-name ci-arm64 \\\n"
      "      --db postgresql://ci@db.example/samebits    # then: samebits verdict --group ...\n"
      "  samebits bisect                                  # after a failing gate: which commit?");
  return {sub, [flags] { return Gate(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(gate, 20, SetupGate);

}  // namespace samebits::cli
