// The subcommand registry both programs are built from (samebits-engine's
// engine/cli and samebits' harness/cli): each <name>_command.cc registers
// itself at namespace scope with
//
//   SAMEBITS_REGISTER_COMMAND(name, order, Setup);
//
// where `Setup` is `Spec Setup(CLI::App& app)` for the program's own command
// spec (its cli/commands.h), and main asks for the registered commands in
// `--help` order. Header only: it needs nothing but the standard library.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace samebits::program {

// One registered subcommand of a program whose command spec is `Spec`.
template <typename Spec>
struct RegisteredCommand {
  using Setup = Spec (*)(CLI::App& app);
  std::string name;
  int order;  // orders `--help`
  Setup setup;
};

// Returns the program's registry: a function-local static, so registrations
// from other files' static initializers work whatever order they run in.
template <typename Spec>
std::vector<RegisteredCommand<Spec>>& CommandRegistry() {
  static std::vector<RegisteredCommand<Spec>> commands;
  return commands;
}

// Registers a subcommand; used through SAMEBITS_REGISTER_COMMAND. Returns true.
template <typename Spec>
bool RegisterCommand(const char* name, int order, Spec (*setup)(CLI::App& app)) {
  CommandRegistry<Spec>().push_back({name, order, setup});
  return true;
}

// Returns the registered subcommands, sorted by order, then name.
template <typename Spec>
std::vector<RegisteredCommand<Spec>> RegisteredCommands() {
  std::vector<RegisteredCommand<Spec>> commands = CommandRegistry<Spec>();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  return commands;
}

}  // namespace samebits::program

#define SAMEBITS_REGISTER_COMMAND(name, order, setup)                     \
  [[maybe_unused]] static const bool samebits_command_registered_##name = \
      ::samebits::program::RegisterCommand(#name, order, setup)
