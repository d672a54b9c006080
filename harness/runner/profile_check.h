// What `samebits profile check` finds out about an engine profile beyond
// what the parser refuses (engine_profile.h): the configurations a default
// run makes, whether each of their names reads back as the same values,
// and, when asked, whether the engine's baseline says a `hello` that echoes
// its configuration.
#pragma once

#include <string>
#include <vector>

#include "harness/runner/engine_profile.h"

namespace samebits::runner {

// Returns the configurations `run` and `gate` make by default with this
// profile: for samebits-engine's own profile its `matrix.configurations`
// templates expanded as the gate expands them with its defaults (--threads
// 1,2,3, --math portable, 8 KiB chunks), else DefaultProfileConfigurations.
// Throws ProfileError when the own profile's templates expand to a name its
// grammar refuses.
std::vector<EngineConfiguration> DefaultRunConfigurations(const EngineProfile& profile);

// Returns what is wrong with the names of `configs` (and of the profile's
// baseline and card baseline), or "" when nothing is: each name must read
// back (ParseConfigurationName) as its own values, and the name the grammar
// writes for those values (FormatConfigurationName) must read back as them
// too. Two axes whose tokens can spell the same text would break this: a
// name would mean another configuration than the one it was written for.
std::string NameRoundTripError(const EngineProfile& profile,
                               const std::vector<EngineConfiguration>& configs);

struct HelloCheckOptions {
  std::string program;          // the engine (ResolveProgram, or a path given instead)
  std::string checkpoint;       // as the engine takes it: "synthetic:tiny"
  std::string scenario_file;    // a small scenario: scenarios/classic.json
  double timeout_seconds = 60;  // kills a child that runs longer
};

// What the baseline's one run said.
struct BaselineHello {
  enum class Outcome {
    kOk,           // a valid hello echoing the configuration, and a whole run
    kUnsupported,  // the engine said it cannot run this here (not a failure)
    kFailed,       // anything else: the message says what
  };
  Outcome outcome = Outcome::kFailed;
  std::string configuration;  // the baseline's name
  std::string message;        // why it is not kOk (the engine's reason for kUnsupported)
  std::string stderr_tail;    // the last lines the child wrote to stderr
};

// Returns the result of running the profile's baseline once on
// `options.checkpoint` and `options.scenario_file`, judged as a gate's cell
// is (profile_cell.h): its hello must be valid and echo the checkpoint and
// every key the profile's `hello` lists; a crash, garbage, an `error`
// record or a missing `done` fails it.
BaselineHello CheckBaselineHello(const EngineProfile& profile, const HelloCheckOptions& options);

}  // namespace samebits::runner
