// `samebits bisect`: finds the commit that changed the numbers. The flags
// become runner::BisectOptions; the work is runner::RunBisect's
// (harness/runner/bisect_run.h).
#include <cstdio>
#include <filesystem>

#include "harness/cli/commands.h"
#include "harness/cli/matrix_flags.h"
#include "harness/cli/path_flags.h"
#include "harness/cli/revision_build_flags.h"
#include "harness/runner/bisect_run.h"
#include "harness/runner/child.h"
#include "harness/runner/git.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;

struct BisectFlags {
  MatrixFlags matrix;
  std::string good, bad = "HEAD";
  runner::RevisionBuildOptions build;  // repo empty: the current folder's
  bool every_cell = false;
  bool quiet = false;
};

// Returns the bisect's options: the flags with the repository resolved to
// its root and the cache folder's default (builds/ beside the database).
runner::BisectOptions BisectOptionsFor(const BisectFlags& flags) {
  runner::BisectOptions options;
  options.build = WithDefaultCacheDir(flags.build, flags.matrix.db);
  options.build.repo = runner::RepositoryRoot(flags.build.repo.empty() ? fs::current_path().string()
                                                                       : flags.build.repo);
  if (fs::path(flags.build.engine).is_absolute()) {
    throw UsageError(
        "--engine must be relative to the worktree (such as build/bin/samebits-engine)");
  }
  options.run = RunOptionsFor(flags.matrix);
  options.good = flags.good;
  options.bad = flags.bad;
  options.references_dir = ReferencesDir(flags.matrix);
  options.every_cell = flags.every_cell;
  options.quiet = flags.quiet;
  options.command_line = CommandLine();
  // Judged as the gate judges a run of the same flags with that engine.
  options.judge_options = [matrix = flags.matrix](const harness::RunResult& run,
                                                  const runner::MatrixRunOptions& ran_with) {
    MatrixFlags m = matrix;
    m.engine = ran_with.engine;
    m.dump_logits = ran_with.dump_logits;
    m.timeout_seconds = ran_with.timeout_seconds;
    return JudgeOptionsFor(run, m);
  };
  options.say = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  return options;
}

int BisectMain(const BisectFlags& flags) {
  const runner::BisectOptions options = BisectOptionsFor(flags);
  const std::unique_ptr<store::Store> store = OpenStore(flags.matrix.db);
  // Ctrl-C or a CI job's cancel kills the running children and lets the
  // bisect remove its worktree and record itself interrupted (main.cc then
  // ends the program by the signal).
  runner::DeferInterrupts();
  const runner::BisectReport report = runner::RunBisect(options, *store);
  std::fputs(report.text.c_str(), stdout);
  return report.found ? 0 : 1;
}

CommandSpec SetupBisect(CLI::App& app) {
  auto flags = std::make_shared<BisectFlags>();
  CLI::App* sub = app.add_subcommand(
      "bisect",
      "Finds the commit that changed the numbers: builds each revision git bisect proposes "
      "(once, cached by its tree), runs the selection and judges it as the gate does.");
  AddMatrixFlags(sub, &flags->matrix);
  // Here the engine is a path inside each revision's worktree, built by
  // the revision build's own --build command.
  sub->remove_option(sub->get_option("--engine"));
  sub->remove_option(sub->get_option("--build"));
  Declare(
      sub->add_option("--engine", flags->build.engine,
                      "The engine program each revision's build leaves, relative to its worktree "
                      "(default build/bin/samebits-engine); any program that speaks "
                      "engine/protocol/PROTOCOL.md will do.")
          ->type_name("PATH"),
      PathRole::kInput);
  sub->add_option("--good", flags->good,
                  "A revision whose outputs agree. Default: the `revision` line of the references "
                  "the selection is judged against, else the newest stored run that agreed.")
      ->type_name("REV");
  sub->add_option("--bad", flags->bad, "A revision whose outputs differ (default HEAD).")
      ->type_name("REV");
  AddRevisionBuildFlags(sub, flags->build, "a revision");
  sub->add_flag("--every-cell", flags->every_cell,
                "Runs every selected cell at each step instead of only those that diverged in "
                "the newest stored run with a difference.");
  sub->add_flag("-q,--quiet", flags->quiet, "Prints no line per step, only the result.");
  sub->footer(
      "Each step maps the outcome for git: the selection agrees with the references (and with\n"
      "the good revision's outputs) -> good; it differs -> bad; the revision does not build\n"
      "(--build failed), or a child crashed, hung or was refused -> skip. At the culprit up\n"
      "to four of the cells that differ run again with traces on the culprit and its parent,\n"
      "to name the first diverging step, position, layer and op. Every step's run is stored,\n"
      "tagged with the bisect.\n\n"
      "The worktrees are the repository's own (`git worktree list` shows them); delete the\n"
      "cache folder and run `git worktree prune` to reclaim the space.\n\n"
      "Exit codes:\n"
      "  0  the first bad commit was found\n"
      "  1  it hides among commits that could not be judged (they are listed)\n"
      "  2  the bisect could not be carried out: bad arguments, a good revision that is not\n"
      "     good, a bad one that is not bad, no repository\n\n"
      "Examples:\n"
      "  samebits gate || samebits bisect            # after a failing gate\n"
      "  samebits bisect --good v0.1 --checkpoint synthetic:tiny --config reference,cpu-t2\n"
      "  samebits bisect --build 'make engine' --engine out/engine --good abc123");
  return {sub, [flags] { return BisectMain(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(bisect, 25, SetupBisect);

}  // namespace samebits::cli
