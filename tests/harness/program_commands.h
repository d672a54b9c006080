// The `samebits` program's commands, built as main.cc builds them, for the
// tests that hold a rule over every command (cli_paths_test.cc,
// cli_claims_test.cc, cli_secrets_test.cc, ...): a command added later is
// covered without anyone adding it there.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "harness/cli/commands.h"

namespace samebits::cli {

// One command of the program ("reference generate" is two words).
struct Command {
  std::vector<std::string> words;
  CLI::App* app = nullptr;

  // Returns the words joined by spaces.
  std::string Name() const {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
    return out;
  }
  // Returns whether the command takes the long option `--name`.
  bool Takes(const std::string& name) const {
    for (const CLI::Option* option : app->get_options()) {
      for (const std::string& l : option->get_lnames()) {
        if (l == name) return true;
      }
    }
    return false;
  }
  // Returns whether the command runs something itself (no subcommands).
  bool IsLeaf() const {
    return app->get_subcommands([](CLI::App*) { return true; }).empty();
  }
};

inline void CollectCommands(CLI::App* app, const std::vector<std::string>& words,
                            std::vector<Command>& out) {
  out.push_back({words, app});
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    std::vector<std::string> deeper = words;
    deeper.push_back(sub->get_name());
    CollectCommands(sub, deeper, out);
  }
}

// Returns the value the walks over every command give a required option
// that names no file: "1" (a run id, a count, a group), except a cell
// (`history --cell`), which is the cell the walks' stores hold: the
// stand-in's scenario on synthetic:tiny in the reference configuration.
inline std::string RequiredValueFor(const CLI::Option* option) {
  if (option->get_type_name() == "CHECKPOINT/SCENARIO/CONFIG") {
    return "synthetic:tiny/standin/reference";
  }
  return "1";
}

// The program's commands, built as main.cc builds them.
class ProgramCommands {
 public:
  ProgramCommands() {
    for (const RegisteredCommand& command : RegisteredCommands()) {
      const CommandSpec spec = command.setup(app_);
      CollectCommands(spec.subcommand, {spec.subcommand->get_name()}, commands_);
    }
  }
  const std::vector<Command>& all() const { return commands_; }

 private:
  CLI::App app_;
  std::vector<Command> commands_;
};

}  // namespace samebits::cli
