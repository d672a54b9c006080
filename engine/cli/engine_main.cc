// samebits-engine: the engine program. main is orchestration only: build the
// command line from the registered subcommands (commands.h), parse, run the
// chosen one, and print every error here, in one place.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "engine/cli/commands.h"
#include "engine/protocol/records.h"

namespace {

using samebits::cli::Command;

// Prints `message` on stderr and, for a protocol subcommand, as an `error`
// record on stdout (the harness reads stdout only). Returns `exit_code`.
int ReportError(const std::string& message, bool protocol, int exit_code) {
  if (protocol) {
    samebits::protocol::RecordWriter(stdout).Write(samebits::protocol::Error{message});
  }
  std::fprintf(stderr, "samebits-engine: error: %s\n", message.c_str());
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "samebits-engine: a small CPU inference engine whose logits are reproducible "
      "bit for bit. Speaks the samebits child protocol (engine/protocol/PROTOCOL.md).",
      "samebits-engine");
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Print the help of every subcommand and exit.");

  struct Entry {
    CLI::App* sub;
    std::unique_ptr<Command> command;
  };
  std::vector<Entry> entries;
  for (const samebits::cli::CommandInfo& info : samebits::cli::RegisteredCommands()) {
    CLI::App* sub = app.add_subcommand(info.name, info.description);
    std::unique_ptr<Command> command = info.make();
    command->Define(*sub);
    entries.push_back({sub, std::move(command)});
  }

  // Before parsing we only know the protocol subcommand by its name: a bad
  // option to `run` must still produce an `error` record on stdout.
  bool protocol = false;
  if (argc > 1) {
    for (const Entry& e : entries) {
      protocol = protocol || (e.command->SpeaksProtocol() && e.sub->get_name() == argv[1]);
    }
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return ReportError(std::string(e.what()) + " (see --help)", protocol, 2);
  }

  for (Entry& e : entries) {
    if (!e.sub->parsed()) continue;
    const bool speaks = e.command->SpeaksProtocol();
    try {
      return e.command->Execute();
    } catch (const samebits::cli::UsageError& error) {
      return ReportError(error.what(), speaks, 2);
    } catch (const std::exception& error) {
      return ReportError(error.what(), speaks, 1);
    }
  }
  return ReportError("no subcommand given (see --help)", false, 2);
}
