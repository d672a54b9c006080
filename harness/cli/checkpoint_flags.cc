// The checkpoint declarations (checkpoint_flags.h).
#include "harness/cli/checkpoint_flags.h"

#include <map>
#include <utility>

#include "harness/cli/commands.h"
#include "harness/runner/run_error.h"

namespace samebits::cli {
namespace {

// The tag a declared option carries: a validator that accepts every value
// and has no description (so `--help` is unchanged). Only an option with
// the tag is looked up in Declared(), so an entry left by an option since
// destroyed never speaks for another.
constexpr const char* kTag = "checkpoint-role";

std::map<const CLI::Option*, CheckpointEngines>& Declared() {
  static std::map<const CLI::Option*, CheckpointEngines> declared;
  return declared;
}

void Enforce(const CLI::App& command) {
  for (const CLI::Option* option : command.get_options()) {
    if (!DeclaresCheckpoints(option) || option->results().empty()) continue;
    const std::vector<std::string>& specs = option->results();
    try {
      runner::RefuseUnknownCheckpoints(specs, Declared().at(option)());
    } catch (const runner::RunError& e) {
      throw UsageError(option->get_name() + ": " + e.what());
    }
  }
  for (const CLI::App* sub : command.get_subcommands()) Enforce(*sub);
}

}  // namespace

CLI::Option* DeclareCheckpoints(CLI::Option* option, CheckpointEngines engines) {
  option->check(CLI::Validator([](const std::string&) { return std::string(); }, "", kTag));
  Declared()[option] = std::move(engines);
  return option;
}

bool DeclaresCheckpoints(const CLI::Option* option) {
  // get_validator is not const, but only looks.
  try {
    const_cast<CLI::Option*>(option)->get_validator(kTag);
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
  return Declared().contains(option);
}

void EnforceCheckpointRules(const CLI::App& command) {
  Enforce(command);
}

}  // namespace samebits::cli
