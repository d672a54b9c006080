// Every number samebits-engine takes on its command line is checked when
// the line is parsed: NaN, infinities, negatives, fractions, values past
// 2^64 and words are refused with exit 2 and a message naming the flag,
// never wrapped (`--batch-seed -1` once became 2^64 - 1) or clamped. The
// options are found in the program's own `--help` of every command it
// lists, by their value names (N, S, MIB, N,N,...), so a new numeric option
// is covered without anyone adding it here.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/engine_process.h"

namespace samebits {
namespace {

using testing::RunEngine;

// Returns the commands `samebits-engine --help` lists.
std::vector<std::string> Commands() {
  const testing::EngineResult help = RunEngine("--help");
  std::vector<std::string> out;
  std::istringstream lines(help.out);
  bool in_list = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Subcommands:", 0) == 0) {
      in_list = true;
      continue;
    }
    std::smatch m;
    if (in_list && std::regex_match(line, m, std::regex(R"(^  ([a-z-]+)\s.*)")))
      out.push_back(m[1]);
  }
  return out;
}

struct NumericOption {
  std::string command, flag, value_name;
  // Values for the command's checkpoint and scenario options, when it has
  // them: ones that fail later, so that a number wrongly accepted is caught
  // by a message that does not name its flag.
  std::string failing_inputs;
};

// Returns every option of `command` whose value name says it is a number.
std::vector<NumericOption> NumericOptions(const std::string& command) {
  const std::set<std::string> numeric = {"N", "S", "MIB", "N,N,...", "SECONDS", "BYTES"};
  const testing::EngineResult help = RunEngine(command + " --help");
  std::vector<NumericOption> out;
  std::string inputs;
  std::istringstream lines(help.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, std::regex(R"(^\s+(--[a-z-]+) (\S+)(\s.*)?$)"))) continue;
    if (m[1] == "--checkpoint") inputs += " --checkpoint synthetic:nope";
    if (m[1] == "--scenario") inputs += " --scenario /nonexistent";
    if (numeric.count(m[2])) out.push_back({command, m[1], m[2], ""});
  }
  for (NumericOption& o : out) o.failing_inputs = inputs;
  return out;
}

TEST(EngineNumbers, EveryNumberRefusesWhatItCannotHonour) {
  const std::vector<std::string> commands = Commands();
  ASSERT_GE(commands.size(), 5u) << "the walk found too few commands to be the program's";
  std::vector<NumericOption> options;
  for (const std::string& c : commands) {
    for (const NumericOption& o : NumericOptions(c)) options.push_back(o);
  }
  ASSERT_GE(options.size(), 10u) << "the walk found too few numeric options";
  bool saw_batch_seed = false;
  for (const NumericOption& o : options) {
    saw_batch_seed |= o.flag == "--batch-seed";
    std::vector<std::string> values = {
        "nan",
        "inf",
        "-inf",
        "-1",
        "1e400",
        "1.5",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999",
        "abc",
    };
    if (o.value_name == "N,N,...") values = {"1,-1", "1,nan", "1,18446744073709551616", "1,,2"};
    for (const std::string& value : values) {
      // A checkpoint that does not exist: a value wrongly accepted fails
      // later, on the checkpoint, with a message that does not name the flag.
      const std::string args = o.command + o.failing_inputs + " " + o.flag + "='" + value + "'";
      const testing::EngineResult r = RunEngine(args);
      EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
      EXPECT_NE(r.err.find(o.flag), std::string::npos) << args << "\n" << r.err;
    }
  }
  EXPECT_TRUE(saw_batch_seed) << "run's --batch-seed was not found in its --help";
  // A seed is decimal digits: not even a hexadecimal form CLI11 takes elsewhere.
  const testing::EngineResult hex =
      RunEngine("run --checkpoint synthetic:nope --scenario /nonexistent --batch-seed 0x10");
  EXPECT_EQ(hex.exit_code, 2);
  EXPECT_NE(hex.err.find("--batch-seed"), std::string::npos) << hex.err;
}

// The largest seed the hello record carries is accepted and echoed as given.
TEST(EngineNumbers, TheLargestSeedIsTakenAsGiven) {
  const testing::EngineResult r =
      RunEngine("run --checkpoint synthetic:tiny --scenario '" SAMEBITS_SOURCE_DIR
                "/scenarios/classic.json' --batch 2 --batch-seed 9223372036854775807");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"batch_seed\":9223372036854775807"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace samebits
