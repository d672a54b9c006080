// `samebits bench A B`: which of two engines (programs, revisions or
// configurations) is faster, by how much, with what confidence, and do they
// still print the same bits? Refuses a busy machine unless --force.
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "harness/cli/checkpoint_flags.h"
#include "harness/cli/commands.h"
#include "harness/cli/engine_choice.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/path_flags.h"
#include "harness/cli/revision_build_flags.h"
#include "harness/report/bench_html.h"
#include "harness/runner/ab_bench.h"
#include "harness/store/bench_records.h"
#include "harness/store/output_file.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;

struct BenchFlags {
  std::string a, b;
  std::string engine;  // for configuration sides; empty: next to samebits
  std::string checkpoint = "synthetic:medium";
  std::string scenario = "classic";
  std::string scenarios_dir;
  std::string config;  // for program and revision sides; empty: cpu-t<cores>
  int rounds = 5;
  int warmup = 1;
  double timeout_seconds = 600;
  bool force = false;
  std::string db;
  std::string report_html;
  // Revision sides are built as `samebits bisect` builds them.
  runner::RevisionBuildOptions build;
  bool quiet = false;
};

// Returns the bench's options: the flags with this project's defaults
// (scenarios folder, engine, builds/ beside the database). Throws
// UsageError for a value out of range.
runner::AbBenchOptions BenchOptionsFor(const BenchFlags& flags) {
  if (flags.rounds < 2) throw UsageError("--rounds must be at least 2 (a confidence interval)");
  if (flags.warmup < 0) throw UsageError("--warmup must not be negative");
  runner::AbBenchOptions options;
  options.a = flags.a;
  options.b = flags.b;
  runner::BenchSideOptions& sides = options.sides;
  sides.checkpoint = flags.checkpoint;
  sides.scenario = flags.scenario;
  sides.scenarios_dir = flags.scenarios_dir.empty() ? GetPaths().scenarios : flags.scenarios_dir;
  sides.config = flags.config;
  sides.engine = flags.engine.empty() ? GetPaths().engine : flags.engine;
  sides.own_profile = OwnEngineProfile();
  sides.build = WithDefaultCacheDir(flags.build, flags.db);
  options.timing.rounds = flags.rounds;
  options.timing.warmup = flags.warmup;
  options.timing.timeout_seconds = flags.timeout_seconds;
  options.force = flags.force;
  options.quiet = flags.quiet;
  options.command_line = CommandLine();
  options.say = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
  options.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  sides.progress = options.progress;
  return options;
}

// The engine of the configuration sides (the sides that name one), asked
// with samebits-engine's probe; a program side declares nothing (as
// `run --engine PATH`), and a revision is built only when the bench runs.
std::vector<runner::EngineToAsk> CheckpointEnginesOf(const BenchFlags& flags) {
  const runner::BenchSideOptions sides = BenchOptionsFor(flags).sides;
  for (const std::string& side : {flags.a, flags.b}) {
    if (runner::NamesConfigurationSide(side, sides)) {
      return {{sides.engine, sides.own_profile->probe}};
    }
  }
  return {};
}

// Stores the bench, prints its table and writes the HTML report. Returns
// the exit code: 0 when every run ran and printed the same bits.
int Finish(const BenchFlags& flags, const harness::BenchRecord& record) {
  std::unique_ptr<store::Store> store = OpenStore(flags.db);
  const int64_t id = store::SaveBench(*store, record);
  std::printf("%s", harness::report::BenchTable(record).c_str());
  std::printf("stored as bench %lld\n", static_cast<long long>(id));
  if (!flags.report_html.empty()) {
    std::ostringstream page;
    harness::report::WriteBenchHtml(record, page);
    store::WriteOutputFile(flags.report_html, page.str());
  }
  for (const harness::BenchSample& s : record.samples) {
    if (!s.ok) {
      std::fprintf(stderr, "samebits bench: a run of %c failed: %s\n", s.side, s.failure.c_str());
      return 1;
    }
  }
  const bool same =
      record.summary.identical && record.summary.a_repeatable && record.summary.b_repeatable;
  return same ? 0 : 1;
}

int Bench(const BenchFlags& flags) {
  const runner::AbBenchOutcome outcome = runner::RunAbBench(BenchOptionsFor(flags));
  if (outcome.refused) {
    std::fprintf(stderr,
                 "samebits bench: refusing to time on a busy machine (the figures would measure "
                 "the other work); fix the above, or pass --force to time anyway\n");
    return 2;
  }
  return Finish(flags, outcome.record);
}

constexpr const char* kBenchFooter =
    "Times are the engine's own (`done` elapsed_ms: the forward passes, loading excluded);\n"
    "wall times are reported beside them. The ratio B/A is the geometric mean of the paired\n"
    "ratios (each A run with the B run next to it), with a 95% Student t-interval over the\n"
    "paired log-ratios. Prefill (prefill and extend steps) and decode are reported apart, per\n"
    "token, with their own medians and paired ratios, from the `done` record's optional\n"
    "prefill_ms/decode_ms; an engine that leaves them out gets \"split unknown\". Every run's\n"
    "outputs are compared: a B that changes a bit is reported as such, whatever its speed.\n\n"
    "The preflight refuses (exit 2) a machine with a load average above half its cores,\n"
    "other processes using more than 25% of the CPU, swap in use, less than 10% memory\n"
    "free, or a CPU frequency governor other than `performance` (where readable).\n\n"
    "Exit codes:\n"
    "  0  both ran every time and printed the same bits\n"
    "  1  a run failed, or the outputs differ (B from A, or a side from itself)\n"
    "  2  the bench could not be carried out: bad arguments, a revision that does not\n"
    "     build, a busy machine (without --force)\n\n"
    "Examples:\n"
    "  samebits bench cpu-t1 cpu-t2\n"
    "  samebits bench HEAD~1 HEAD --config cpu-t2 --report-html reports/bench.html\n"
    "  samebits bench ./old-engine build/bin/samebits-engine --checkpoint synthetic:bench";

CommandSpec SetupBench(CLI::App& app) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* sub = app.add_subcommand(
      "bench",
      "Times two engines against each other (programs, revisions or configurations), "
      "interleaved A B B A, and checks that they print the same bits.");
  Declare(
      sub->add_option("A", flags->a,
                      "The baseline: an engine program, a configuration of the default engine "
                      "(such as cpu-t1) or a git revision (built as `samebits bisect` builds it).")
          ->required()
          ->type_name("ENGINE|CONFIG|REV"),
      PathRole::kInput);
  Declare(sub->add_option("B", flags->b, "The contender, named the same ways as A.")
              ->required()
              ->type_name("ENGINE|CONFIG|REV"),
          PathRole::kInput);
  DeclareCheckpoints(
      Declare(sub->add_option("--checkpoint", flags->checkpoint,
                              "The checkpoint both run (default synthetic:medium). A file that is "
                              "not there, or a synthetic checkpoint the engine of a configuration "
                              "side says it does not know, is refused before anything runs.")
                  ->type_name("SPEC"),
              PathRole::kInput),
      [flags] { return CheckpointEnginesOf(*flags); });
  Declare(sub->add_option("--scenario", flags->scenario,
                          "The scenario both run: a name from the scenarios folder or a JSON file "
                          "(default classic).")
              ->type_name("NAME|FILE"),
          PathRole::kInput);
  Declare(
      sub->add_option("--scenarios-dir", flags->scenarios_dir,
                      "Takes scenario names from this folder instead of the project's scenarios/.")
          ->type_name("DIR"),
      PathRole::kInput);
  sub->add_option("--config", flags->config,
                  "The configuration program and revision sides run (default cpu-tN with N the "
                  "number of cores).")
      ->type_name("NAME");
  Declare(sub->add_option("--engine", flags->engine,
                          "The engine configuration sides run (default: samebits-engine next to "
                          "samebits).")
              ->type_name("PATH"),
          PathRole::kInput);
  sub->add_option("--rounds", flags->rounds,
                  "Rounds of A B B A that count (default 5: ten runs of each side).")
      ->type_name("N")
      ->check(WholeNumberInRange(2, kMaxCount));
  sub->add_option("--warmup", flags->warmup,
                  "Runs of each side first, discarded from the times (default 1).")
      ->type_name("N")
      ->check(WholeNumberInRange(0, kMaxCount));
  sub->add_option("--timeout", flags->timeout_seconds,
                  "Kills a run (and its process group) that takes longer than this (default 600).")
      ->type_name("SECONDS")
      ->check(SecondsInRange(kMaxTimeoutSeconds));
  sub->add_flag("--force", flags->force,
                "Times even when the preflight finds the machine busy (the result records it).");
  Declare(AddStoreOption(sub, flags->db, "Stores the bench in"), PathRole::kWriteStore);
  Declare(
      sub->add_option("--report-html", flags->report_html,
                      "Writes an HTML report (table and an SVG plot of every run) to this file.")
          ->type_name("FILE"),
      PathRole::kOutputFile);
  AddRevisionBuildFlags(sub, flags->build, "a revision side");
  Declare(sub->add_option("--built-engine", flags->build.engine,
                          "The engine a revision's build leaves, relative to its worktree (default "
                          "build/bin/samebits-engine).")
              ->type_name("PATH"),
          PathRole::kInput);
  sub->add_flag("-q,--quiet", flags->quiet, "Prints no line per run.");
  sub->footer(kBenchFooter);
  return {sub, [flags] { return Bench(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(bench, 27, SetupBench);

}  // namespace samebits::cli
