// samebits-engine: the engine program. main is orchestration only: build the
// command line from the registered subcommands (commands.h), parse, run the
// chosen one, and print every error here, in one place. `run --serve` runs
// that same command line once per cell read from stdin (serve.h).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "engine/cli/commands.h"
#include "engine/cli/serve.h"
#include "engine/protocol/records.h"

namespace {

// Prints `message` on stderr and, for a protocol subcommand, as an `error`
// record on stdout (the harness reads stdout only). Returns `exit_code`.
int ReportError(const std::string& message, bool protocol, int exit_code) {
  if (protocol) {
    samebits::protocol::RecordWriter(stdout).Write(samebits::protocol::Error{message});
  }
  std::fprintf(stderr, "samebits-engine: error: %s\n", message.c_str());
  return exit_code;
}

// Prints `reason` on stderr and, for a protocol subcommand, as an
// `unsupported` record on stdout. Returns 2.
int ReportUnsupported(const std::string& reason, bool protocol) {
  if (protocol) {
    samebits::protocol::RecordWriter(stdout).Write(samebits::protocol::Unsupported{reason});
  }
  std::fprintf(stderr, "samebits-engine: unsupported: %s\n", reason.c_str());
  return 2;
}

// Parses `args` (the program's name first) as the whole command line, runs
// the chosen subcommand and returns the exit code.
int RunCommandLine(const std::vector<std::string>& args) {
  CLI::App app(
      "samebits-engine: a small CPU inference engine whose logits are reproducible "
      "bit for bit. Speaks the samebits child protocol (engine/protocol/PROTOCOL.md).",
      "samebits-engine");
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Print the help of every subcommand and exit.");

  std::vector<samebits::cli::CommandSpec> specs;
  for (const samebits::cli::RegisteredCommand& command : samebits::cli::RegisteredCommands()) {
    specs.push_back(command.setup(app));
  }

  // Before parsing we only know the protocol subcommand by its name: a bad
  // option to `run` must still produce an `error` record on stdout.
  bool protocol = false;
  if (args.size() > 1) {
    for (const samebits::cli::CommandSpec& spec : specs) {
      protocol = protocol || (spec.speaks_protocol && spec.subcommand->get_name() == args[1]);
    }
  }

  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return ReportError(std::string(e.what()) + " (see --help)", protocol, 2);
  }

  for (const samebits::cli::CommandSpec& spec : specs) {
    if (!spec.subcommand->parsed()) continue;
    try {
      return spec.run();
    } catch (const samebits::cli::UnsupportedError& unsupported) {
      return ReportUnsupported(unsupported.what(), spec.speaks_protocol);
    } catch (const samebits::cli::UsageError& error) {
      return ReportError(error.what(), spec.speaks_protocol, 2);
    } catch (const std::exception& error) {
      return ReportError(error.what(), spec.speaks_protocol, 1);
    }
  }
  return ReportError("no subcommand given (see --help)", false, 2);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  if (samebits::cli::IsServeCommandLine(args)) {
    return samebits::cli::ServeCells(args, RunCommandLine, stdin, [](const std::string& message) {
      return ReportError(message, /*protocol=*/true, 2);
    });
  }
  return RunCommandLine(args);
}
