// `samebits profile check FILE`: is this engine profile one the harness
// reads, does its program exist, what would a run of it make, and, with
// --hello, does the engine's baseline say a hello that echoes its
// configuration? The front door for a newcomer writing a profile
// (engines/README.md): every problem is reported with the file, the key and
// what was expected, before any run is attempted.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "harness/cli/commands.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/path_flags.h"
#include "harness/cli/scenario_file.h"
#include "harness/runner/engine_profile.h"
#include "harness/runner/profile_check.h"

namespace samebits::cli {
namespace {

struct ProfileCheckFlags {
  std::string file;
  std::string program;     // --program: instead of the profile's command
  std::string checkpoint;  // --hello: run the baseline on this checkpoint
  std::string scenario = "classic";
  double timeout_seconds = 60;
};

// Where the schema is written down, for every refusal.
constexpr const char* kSchemaHint = " (engines/README.md describes every key)";

std::string Join(const std::vector<std::string>& items, const std::string& separator = ", ") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// Returns the values an axis takes, as a person reads them.
std::string AxisValues(const runner::EngineAxis& axis) {
  if (!axis.is_range) return Join(axis.values, "|");
  std::string text = std::to_string(axis.min) + ".." + std::to_string(axis.max);
  std::vector<std::string> units;
  for (const auto& [suffix, factor] : axis.units) {
    units.push_back(suffix + "=" + std::to_string(factor));
  }
  return units.empty() ? text : text + " (units " + Join(units) + ")";
}

// Returns what an axis's default means for names.
std::string AxisDefault(const runner::EngineAxis& axis) {
  if (!axis.default_value) return "no default: every name gives it";
  return "default " + *axis.default_value +
         (axis.name_default ? " (a name may spell it)" : " (left out of names)");
}

void PrintAxes(const runner::EngineProfile& profile) {
  size_t name_width = 0, token_width = 0, values_width = 0;
  for (const runner::EngineAxis& axis : profile.axes) {
    name_width = std::max(name_width, axis.name.size());
    token_width = std::max(token_width, axis.token.size());
    values_width = std::max(values_width, AxisValues(axis).size());
  }
  std::printf("  axes         %zu, in the order names give them (tokens joined by '-'):\n",
              profile.axes.size());
  for (const runner::EngineAxis& axis : profile.axes) {
    std::printf("    %-*s  %-*s  %-*s  %s\n", static_cast<int>(name_width), axis.name.c_str(),
                static_cast<int>(token_width), axis.token.c_str(), static_cast<int>(values_width),
                AxisValues(axis).c_str(), AxisDefault(axis).c_str());
  }
}

std::vector<std::string> Names(const std::vector<runner::EngineConfiguration>& configs) {
  std::vector<std::string> names;
  names.reserve(configs.size());
  for (const runner::EngineConfiguration& c : configs) names.push_back(c.name);
  return names;
}

void PrintCard(const runner::EngineProfile& profile) {
  std::vector<std::string> tried;
  for (const auto& [axis, values] : profile.card_values) {
    tried.push_back(axis + " " + (values.empty() ? "(not varied)" : Join(values, "|")));
  }
  std::printf("  card         baseline %s; %s\n", profile.card_baseline.name.c_str(),
              tried.empty()
                  ? "every other value of each enumeration"
                  : ("tries " + Join(tried, "; ") + "; other enumerations: every value").c_str());
}

void PrintSummary(const runner::EngineProfile& profile, const std::string& program,
                  const std::vector<runner::EngineConfiguration>& configs) {
  std::printf("%s: a valid engine profile (format %d)\n", DisplayPath(profile.file).c_str(),
              runner::kEngineProfileFormat);
  std::printf("  name         %s\n", profile.name.c_str());
  if (!profile.description.empty()) std::printf("  description  %s\n", profile.description.c_str());
  std::printf("  program      %s\n", program.c_str());
  std::printf("  checkpoints  %s\n", Join(profile.checkpoints).c_str());
  PrintAxes(profile);
  std::printf("  baseline     %s\n", profile.baseline.name.c_str());
  std::vector<std::string> keys;
  for (const runner::HelloEcho& e : profile.hello) keys.push_back(e.key);
  std::printf("  hello        %s\n", keys.empty()
                                         ? "echoes nothing the profile checks (only the checkpoint)"
                                         : ("must echo " + Join(keys)).c_str());
  std::vector<std::string> known;
  for (const runner::KnownDifference& k : profile.known_differences) {
    known.push_back(k.axis + (k.values.empty() ? "" : " " + Join(k.values, "|")));
  }
  std::printf("  known        %zu declared difference(s)%s\n", known.size(),
              known.empty() ? "" : (": " + Join(known, "; ")).c_str());
  PrintCard(profile);
  const bool own = profile.name == runner::kOwnEngineName;
  std::printf("  matrix       %zu configuration(s) by default%s: %s\n", configs.size(),
              own ? " (--threads 1,2,3, --math portable)" : "", Join(Names(configs)).c_str());
  if (!profile.probe.empty())
    std::printf("               (a run leaves out those its probe says it can never run here)\n");
  if (!profile.matrix_checkpoints.empty())
    std::printf("               checkpoints: %s\n", Join(profile.matrix_checkpoints).c_str());
  std::vector<std::string> scenarios;
  for (const std::string& s : profile.matrix_scenarios) {
    scenarios.push_back(DisplayPath(std::filesystem::path(s).lexically_normal().string()));
  }
  if (!scenarios.empty()) std::printf("               scenarios: %s\n", Join(scenarios).c_str());
}

// Returns the program to run, or "" with `*why` set when there is none.
std::string Program(const runner::EngineProfile& profile, const std::string& given,
                    std::string* why) {
  if (!given.empty()) {
    if (::access(given.c_str(), X_OK) == 0) return given;
    *why = "--program " + given + ": expected an executable program; it is not executable";
    return "";
  }
  try {
    return runner::ResolveProgram(profile);
  } catch (const runner::ProfileError& e) {
    *why = e.what();
    return "";
  }
}

int Check(const ProfileCheckFlags& flags) {
  runner::EngineProfile profile;
  std::vector<runner::EngineConfiguration> configs;
  try {
    profile = runner::LoadEngineProfile(flags.file);
    configs = runner::DefaultRunConfigurations(profile);
  } catch (const runner::ProfileError& e) {
    throw UsageError(std::string("engine profile refused: ") + e.what() + kSchemaHint);
  } catch (const runner::ConfigurationNameError& e) {
    throw UsageError("engine profile refused: " + flags.file +
                     ": expected the configurations of its default matrix to be names its "
                     "grammar takes: " +
                     e.what() + kSchemaHint);
  }
  if (const std::string why = runner::NameRoundTripError(profile, configs); !why.empty()) {
    throw UsageError("engine profile refused: " + flags.file +
                     ": axes: expected every configuration name to read back as the values it "
                     "was written for; " +
                     why + " (two axes whose tokens can spell the same text)" + kSchemaHint);
  }
  std::string why_no_program;
  const std::string program = Program(profile, flags.program, &why_no_program);
  PrintSummary(profile, program.empty() ? "(missing: see below)" : program, configs);
  if (program.empty()) throw UsageError(why_no_program);
  if (flags.checkpoint.empty()) return 0;

  runner::HelloCheckOptions options;
  options.program = program;
  options.checkpoint = flags.checkpoint;
  options.scenario_file = ScenarioFile(flags.scenario);
  options.timeout_seconds = flags.timeout_seconds;
  const runner::BaselineHello hello = runner::CheckBaselineHello(profile, options);
  const std::string cell =
      hello.configuration + " on " + flags.checkpoint + " / " + DisplayPath(options.scenario_file);
  switch (hello.outcome) {
    case runner::BaselineHello::Outcome::kOk:
      std::printf("hello: ok (%s): a valid hello that echoes the configuration, and a whole run\n",
                  cell.c_str());
      return 0;
    case runner::BaselineHello::Outcome::kUnsupported:
      std::printf("hello: UNSUPPORTED (%s): %s\n", cell.c_str(), hello.message.c_str());
      return 0;
    case runner::BaselineHello::Outcome::kFailed:
      break;
  }
  std::printf("hello: FAILED (%s): %s\n", cell.c_str(), hello.message.c_str());
  if (!hello.stderr_tail.empty())
    std::printf("  the engine's stderr ended with:\n%s\n", hello.stderr_tail.c_str());
  return 1;
}

CommandSpec SetupProfile(CLI::App& app) {
  auto flags = std::make_shared<ProfileCheckFlags>();
  CLI::App* sub = app.add_subcommand("profile", "Checks an engine profile (engines/*.json).");
  sub->require_subcommand(1);
  CLI::App* check = sub->add_subcommand(
      "check",
      "Reads an engine profile with the harness's own parser and says whether it is valid "
      "(else the file, the key and what was expected there), whether its program exists and "
      "can be run, and what a run of it would make: its axes with their values and defaults, "
      "its baseline, its card's baseline and the configurations of its default matrix. With "
      "--hello it also runs the baseline once and checks that the engine says a valid hello "
      "echoing its configuration.");
  Declare(check->add_option("FILE", flags->file, "The engine profile to check.")
              ->type_name("FILE")
              ->required(),
          PathRole::kInput);
  Declare(check
              ->add_option("--program", flags->program,
                           "Checks and runs this program instead of the one the profile's "
                           "command names.")
              ->type_name("PATH")
              ->check(CLI::ExistingFile),
          PathRole::kInput);
  check
      ->add_option("--hello", flags->checkpoint,
                   "Also runs the profile's baseline once on this checkpoint, as the engine "
                   "takes it (synthetic:tiny, gguf:PATH, ...), and checks its hello.")
      ->type_name("SPEC");
  Declare(check
              ->add_option("--scenario", flags->scenario,
                           "The scenario --hello runs: a name from the scenarios folder or a "
                           "path to a JSON file (default: classic).")
              ->type_name("NAME|FILE"),
          PathRole::kInput);
  check
      ->add_option("--timeout", flags->timeout_seconds,
                   "Kills the --hello child if it runs longer than this many seconds (default: "
                   "60).")
      ->type_name("SECONDS")
      ->check(SecondsInRange(kMaxTimeoutSeconds));
  check->footer(
      "Exit codes:\n"
      "  0  the profile is valid and its program exists (and, with --hello, the baseline\n"
      "     said a hello that echoes its configuration, or said it cannot run here:\n"
      "     UNSUPPORTED, with the engine's reason)\n"
      "  1  the --hello run failed: no valid hello, one that does not echo the\n"
      "     configuration, an error, a crash or a timeout (the reason is printed)\n"
      "  2  the profile is invalid, its program is missing, or a bad flag\n\n"
      "Examples:\n"
      "  samebits profile check engines/pytorch.json\n"
      "  samebits profile check my-engine.json --hello synthetic:tiny\n"
      "  samebits profile check my-engine.json --program ./my-engine --hello gguf:model.gguf");
  return {sub, [flags, check] {
            if (check->parsed()) return Check(*flags);
            throw UsageError("profile: say check");
          }};
}

}  // namespace

SAMEBITS_REGISTER_COMMAND(profile, 69, SetupProfile);

}  // namespace samebits::cli
