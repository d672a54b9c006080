// The `samebits` program: parse, dispatch to the subcommand, and print
// errors in one place. Subcommands register themselves (commands.h).
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <exception>

#include "harness/analysis/terminal_guard.h"
#include "harness/analysis/terminal_text.h"
#include "harness/cli/checkpoint_flags.h"
#include "harness/cli/commands.h"
#include "harness/cli/path_flags.h"
#include "harness/runner/child.h"

namespace {

int RunSamebits(int argc, char** argv) {
  using samebits::cli::CommandSpec;
  // Every byte printed from here on is escaped for the terminal in one
  // place (terminal_guard.h): no stored or quoted string can reach it raw.
  samebits::harness::GuardTerminalOutput();
  samebits::cli::SetCommandLine(argc, argv);
  CLI::App app(
      "samebits: did these logits change, by a single bit - and if so where, why and since when?\n"
      "Runs the engine over checkpoints x scenarios x configurations, stores every output's\n"
      "hashes, and gates them against each other and the committed references.");
  app.require_subcommand(1);
  app.footer(
      "Exit codes:\n"
      "  0  success (for gate: every configuration agrees with the others and the reference)\n"
      "  1  a check failed: outputs differ, or a child crashed, hung or broke the protocol\n"
      "  2  the command could not be carried out: bad arguments, a selection that runs\n"
      "     nothing, unreadable files\n\n"
      "Examples:\n"
      "  samebits gate                                    # the default matrix against "
      "references/\n"
      "  samebits run --checkpoint synthetic:tiny --config reference,cpu-t2 -j 2\n"
      "  samebits reference generate                      # write references/portable.txt\n"
      "  samebits runs && samebits show latest --steps");
  std::vector<CommandSpec> specs;
  for (const auto& command : samebits::cli::RegisteredCommands())
    specs.push_back(command.setup(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    // CLI11 returns 0 for --help; any real parse error is a usage error.
    return code == 0 ? 0 : 2;
  }
  try {
    for (const CommandSpec& spec : specs) {
      if (spec.subcommand == nullptr || !spec.subcommand->parsed()) continue;
      // Before any work: where its outputs may go, and whether it may write
      // the store (path_flags.h).
      samebits::cli::EnforcePathRules(*spec.subcommand);
      // Before any cell: every checkpoint it names can be run, as far as
      // its files and its engine can tell (checkpoint_flags.h).
      samebits::cli::EnforceCheckpointRules(*spec.subcommand);
      return spec.run();
    }
    std::fprintf(stderr, "samebits: error: no subcommand given (see samebits --help)\n");
    return 2;
  } catch (const samebits::runner::Interrupted& e) {
    // The command cleaned up after a deferred SIGINT or SIGTERM
    // (runner/child.h); the program ends by that signal, as the shell and
    // a CI runner expect of an interrupted program.
    std::fprintf(stderr, "samebits: %s; cleaned up\n", e.what());
    std::fflush(stderr);
    std::signal(e.signal(), SIG_DFL);
    std::raise(e.signal());
    return 128 + e.signal();
  } catch (const std::exception& e) {
    // An error may quote a file's or a child's text: shown escaped.
    std::fprintf(stderr, "samebits: error: %s\n",
                 samebits::harness::TerminalSafeLines(e.what()).c_str());
    return 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // What escapes RunSamebits was thrown before or after a command's own
  // handlers (building the command line's parser, printing its help): still
  // an error with a message and exit code 2, never std::terminate.
  try {
    return RunSamebits(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "samebits: error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "samebits: error: an exception of an unknown type\n");
  }
  return 2;
}
