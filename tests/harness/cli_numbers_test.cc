// Every number a `samebits` command takes (a count N or a duration in
// SECONDS) is checked when the command line is parsed: NaN, infinities,
// negatives, values past 2^64 and words are refused (exit 2), never wrapped
// or taken as "no limit". Walked over the program's own commands and
// options, so a new numeric option is covered without anyone adding it.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "harness/cli/commands.h"
#include "tests/harness/program_commands.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::cli {
namespace {

// Returns the result of running the program with `argv` (a value refused
// while parsing exits 2 before anything runs).
standin::CommandResult Samebits(const std::vector<std::string>& argv) {
  std::vector<std::string> full = {standin::BinDir() + "/samebits"};
  full.insert(full.end(), argv.begin(), argv.end());
  return standin::RunCommand(full);
}

struct NumericOption {
  std::vector<std::string> words;  // the command ("reference generate")
  std::vector<std::string> required;
  std::string flag;
  std::string type;
};

void Collect(CLI::App* app, std::vector<std::string> words, std::vector<NumericOption>& out) {
  std::vector<std::string> required;
  for (const CLI::Option* option : app->get_options()) {
    if (!option->get_required()) continue;
    if (!option->get_positional()) required.push_back(option->get_name());
    required.push_back(option->get_type_name() == "FILE" ? "out.json" : RequiredValueFor(option));
  }
  for (const CLI::Option* option : app->get_options()) {
    const std::string type = option->get_type_name();
    if (option->get_positional() || (type != "N" && type != "SECONDS" && type != "N,...")) continue;
    out.push_back({words, required, option->get_name(), type});
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    std::vector<std::string> deeper = words;
    deeper.push_back(sub->get_name());
    Collect(sub, deeper, out);
  }
}

TEST(CliNumbers, EveryCountAndDurationRefusesWhatItCannotHonour) {
  CLI::App app;
  std::vector<NumericOption> options;
  for (const RegisteredCommand& command : RegisteredCommands()) {
    CLI::App* sub = command.setup(app).subcommand;
    Collect(sub, {sub->get_name()}, options);
  }
  ASSERT_GE(options.size(), 8u) << "the walk found too few numeric options to be the program's";
  const std::vector<std::string> hostile = {"nan",
                                            "-nan",
                                            "inf",
                                            "-inf",
                                            "-1",
                                            "1e400",
                                            "18446744073709551616",
                                            "99999999999999999999999",
                                            "abc",
                                            ""};
  for (const NumericOption& o : options) {
    std::vector<std::string> base = o.words;
    base.insert(base.end(), o.required.begin(), o.required.end());
    std::vector<std::string> values = hostile;
    if (o.type == "N") values.push_back("1.5");
    for (const std::string& value : values) {
      std::vector<std::string> argv = base;
      argv.push_back(o.flag);
      argv.push_back(value);
      const standin::CommandResult r = Samebits(argv);
      EXPECT_EQ(r.exit_code, 2) << r.command << "\n" << r.output;
      // Refused for this value, not for anything else on the line.
      EXPECT_NE(r.output.find(o.flag), std::string::npos) << r.command << "\n" << r.output;
    }
  }
}

}  // namespace
}  // namespace samebits::cli
