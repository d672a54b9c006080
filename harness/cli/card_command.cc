// `samebits card`: the determinism card of an engine described by a profile
// (harness/runner/card_run.h): one axis at a time against its baseline, on
// the checkpoints and scenarios asked for, as a Markdown table on stdout and
// optionally in Markdown and HTML files.
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>

#include "harness/cli/checkpoint_flags.h"
#include "harness/cli/commands.h"
#include "harness/cli/engine_choice.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/path_flags.h"
#include "harness/cli/report_flags.h"
#include "harness/cli/scenario_file.h"
#include "harness/report/card_report.h"
#include "harness/runner/card_run.h"
#include "harness/runner/temp_folder.h"
#include "harness/store/output_file.h"

namespace samebits::cli {
namespace {

namespace fs = std::filesystem;

struct CardFlags {
  std::string engine, engine_profile, program;
  std::string baseline;  // --baseline: instead of the profile's card baseline
  std::vector<std::string> checkpoints;
  std::vector<std::string> scenarios = {"classic"};
  double timeout_seconds = 120;
  bool no_reference = false;
  bool build = false;
  bool feed = false;
  ReportFlags reports;
};

// The engine the card runs, asked with its profile's probe; nothing when
// the flags name no one engine (Card refuses them).
std::vector<runner::EngineToAsk> CheckpointEnginesOf(const CardFlags& flags) {
  if (flags.engine.empty() == flags.engine_profile.empty() ||
      flags.engine.find('/') != std::string::npos) {
    return {};
  }
  const std::shared_ptr<const runner::EngineProfile> profile =
      ChosenProfile(flags.engine, flags.engine_profile);
  if (!profile) return {};
  if (!flags.program.empty()) return {{flags.program, profile->probe}};
  BuildIfAsked(flags.build, profile.get());
  try {
    return {{runner::ResolveProgram(*profile), profile->probe}};
  } catch (const runner::ProfileError&) {
    return {};  // Card says so, with what to do
  }
}

int Card(const CardFlags& flags) {
  if (flags.engine.empty() == flags.engine_profile.empty())
    throw UsageError("give exactly one of --engine NAME and --engine-profile FILE");
  if (flags.engine.find('/') != std::string::npos) {
    throw UsageError("--engine " + flags.engine +
                     ": card takes a profile's name (or --program PATH)");
  }
  runner::EngineProfile profile = *ChosenProfile(flags.engine, flags.engine_profile);
  if (!flags.baseline.empty()) {
    try {
      profile.card_baseline = runner::ParseConfigurationName(profile, flags.baseline);
    } catch (const runner::ConfigurationNameError& e) {
      throw UsageError("--baseline " + flags.baseline + ": " + e.what());
    }
  }
  BuildIfAsked(flags.build, &profile);
  runner::CardOptions options;
  try {
    options.program = flags.program.empty() ? runner::ResolveProgram(profile) : flags.program;
  } catch (const runner::ProfileError& e) {
    throw UsageError(std::string(e.what()) + " (or give --program PATH)");
  }
  options.checkpoints = flags.checkpoints;
  for (const std::string& s : flags.scenarios) options.scenario_files.push_back(ScenarioFile(s));
  options.timeout_seconds = flags.timeout_seconds;
  if (flags.feed) {
    if (profile.Axis("feed") != nullptr) {
      throw UsageError("--feed: the profile declares its own axis 'feed', which the card varies");
    }
    for (const char* name : {"chunk-prefill-12", "chunk-extend-6", "chunk-extend-1x6"}) {
      options.feed_scenario_files.push_back(ScenarioFile(name));
    }
  }
  // Another engine's baseline is measured against samebits-engine's
  // reference pass; samebits-engine's own card has that pass as a row.
  if (!IsOwnEngine(profile) && !flags.no_reference) {
    std::error_code exists;
    if (fs::is_regular_file(GetPaths().engine, exists)) {
      options.reference_program = GetPaths().engine;
      options.reference_profile = OwnEngineProfile();
    }
  }
  // The dumps measure how much a differing row differs; they are removed
  // with their folder at the end.
  const runner::TempFolder dumps("samebits-card");
  options.dump_dir = dumps.path();
  harness::Card card = runner::RunCard(profile, options);
  card.profile_file =
      DisplayPath(profile.file);  // as the user would type it: reports are committed
  std::ostringstream md;
  harness::report::WriteCardReport(card, "md", md);
  std::printf("%s", md.str().c_str());
  WriteReports(flags.reports, [&](const std::string& format, const std::string& path) {
    std::ostringstream text;
    harness::report::WriteCardReport(card, format, text);
    store::WriteOutputFile(path, text.str());
  });
  // A card blind to its own control is invalid whatever its rows say: said
  // last, where a CI log's reader looks.
  if (const harness::ProbePower power = harness::MeasureProbePower(card);
      power.measured && !power.seen) {
    std::fprintf(stderr, "samebits: card: %s\n", power.line.c_str());
  }
  return card.ExitCode();
}

CommandSpec SetupCard(CLI::App& app) {
  auto flags = std::make_shared<CardFlags>();
  CLI::App* sub = app.add_subcommand(
      "card",
      "Writes the determinism card of an engine described by a profile: its baseline "
      "configuration and, one axis at a time, each value the profile says to try, every "
      "step compared bit for bit with the baseline; where a row differs, the first step and "
      "position, the NMSE and KL divergence there and whether the argmax moved. A difference "
      "the profile declares is KNOWN; a declared one that no longer differs is FIXED.");
  sub->add_option("--engine", flags->engine,
                  "The engine whose profile is engines/NAME.json in the project.")
      ->type_name("NAME");
  Declare(sub->add_option("--engine-profile", flags->engine_profile,
                          "The engine profile to read (instead of --engine).")
              ->type_name("FILE")
              ->check(CLI::ExistingFile),
          PathRole::kInput);
  AddBuildFlag(sub, &flags->build);
  Declare(sub->add_option("--program", flags->program,
                          "Runs this program instead of the one the profile's command names.")
              ->type_name("PATH")
              ->check(CLI::ExistingFile),
          PathRole::kInput);
  DeclareCheckpoints(sub->add_option("--checkpoint", flags->checkpoints,
                                     "The checkpoints to run, as the engine takes them "
                                     "(synthetic:tiny, gguf:PATH, ...); one table each. A file "
                                     "that is not there, or a synthetic checkpoint the engine "
                                     "says it does not know, is refused before anything runs.")
                         ->type_name("SPEC")
                         ->delimiter(',')
                         ->required(),
                     [flags] { return CheckpointEnginesOf(*flags); });
  sub->add_option("--baseline", flags->baseline,
                  "The configuration every row varies one axis of, named in the profile's "
                  "grammar (default: the profile's card.baseline, else its baseline); e.g. "
                  "t1-cuda for the PyTorch adapter's GPU rows.")
      ->type_name("CONFIG");
  Declare(sub->add_option(
                 "--scenario", flags->scenarios,
                 "The scenarios to run: names from the scenarios folder or paths to JSON files "
                 "(default: classic).")
              ->type_name("NAME|FILE")
              ->delimiter(','),
          PathRole::kInput);
  sub->add_flag(
      "--no-reference", flags->no_reference,
      "Leaves out the baseline's conformance to samebits-engine's reference pass (measured "
      "by default for every engine but samebits-engine, on each checkpoint and scenario).");
  sub->add_flag("--feed", flags->feed,
                "Adds a feed table per checkpoint: the baseline fed the same 12 tokens whole, as "
                "a prefill of 6 and one extend of 6, and as a prefill of 6 and six single-token "
                "extends (scenarios/chunk-prefill-12, chunk-extend-6, chunk-extend-1x6), every "
                "row compared with the whole prompt's (rows `feed` `extend` and `feed` "
                "`token`; a profile may declare them known on axis `feed`).");
  sub->add_option("--timeout", flags->timeout_seconds,
                  "Kills a child that runs longer than this many seconds (default: 120).")
      ->type_name("SECONDS")
      ->check(SecondsInRange(86400));
  // The HTML card also plots the NMSE by position of every differing row.
  AddReportFlags(sub, flags->reports, "the card", harness::report::CardReportFormats());
  sub->footer(
      "Which values are tried: the profile's card.values per axis; an axis with a list of\n"
      "values not listed there tries every other value; a range axis not listed is not\n"
      "varied (the card says so). The baseline is --baseline, else card.baseline, else the\n"
      "profile's baseline.\n\n"
      "Exit codes:\n"
      "  0  every row is identical, KNOWN or UNSUPPORTED\n"
      "  1  a row differs unexpectedly, is FIXED, or its child failed\n"
      "  2  the card could not be made: a bad profile or flag, or nothing ran\n\n"
      "Examples:\n"
      "  samebits card --engine samebits --checkpoint synthetic:tiny --report-html card.html\n"
      "  samebits card --engine-profile my-engine.json --checkpoint gguf:model.gguf\n"
      "  samebits card --engine pytorch --baseline t1-cuda --checkpoint synthetic:tiny-f32");
  return {sub, [flags] { return Card(*flags); }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(card, 68, SetupCard);

}  // namespace samebits::cli
