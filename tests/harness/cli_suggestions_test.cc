// Class 5 of issue 43: every command the harness suggests is runnable. The
// gate (and `run`) print a `samebits bisect` command built from the parsed
// matrix flags (cli/bisect_advice.h); a failed gate on `--engine-profile
// FILE` once suggested a bisect without it, which would have bisected
// samebits-engine. This test gives each matrix flag, taken from the CLI's
// own list (AddMatrixFlags, which gate, run and bisect share), a value other
// than its default, builds the suggestion, parses it back with bisect's
// flags and checks that it holds the same values and selects the same cells.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "harness/cli/bisect_advice.h"
#include "harness/cli/commands.h"
#include "harness/cli/matrix_flags.h"
#include "harness/runner/scheduler.h"
#include "harness/runner/selection.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::cli {
namespace {

using standin::Source;
using standin::TempDir;

// Returns the words of a shell line as ShellQuote writes them (plain words
// and '...' with '\'' for a quote).
std::vector<std::string> ShellWords(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      const size_t end = line.find('\'', i + 1);
      word += line.substr(i + 1, end - i - 1);
      i = end;
      in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

// Returns the matrix flags `argv` gives (as gate and bisect parse them).
MatrixFlags Parse(const std::vector<std::string>& argv) {
  CLI::App app;
  MatrixFlags flags;
  AddMatrixFlags(&app, &flags);
  std::vector<std::string> reversed(argv.rbegin(), argv.rend());
  app.parse(reversed);
  return flags;
}

// Returns the labels of the cells `flags` select.
std::vector<std::string> Cells(const MatrixFlags& flags) {
  std::vector<std::string> out;
  for (const runner::Cell& c : runner::SelectCells(RunOptionsFor(flags).selection))
    out.push_back(runner::CellLabel(c));
  return out;
}

TEST(Suggestions, TheBisectCommandCarriesEveryMatrixFlagAndSelectsTheSameCells) {
  TempDir dir("suggestions");
  const std::string profile = Source("tests/standins/standin_profile.json");
  // A value other than the default for every matrix flag that decides what
  // bisect runs; the rest say why they are not carried.
  const std::map<std::string, std::vector<std::string>> carried = {
      {"--engine-profile",
       {"--engine-profile", profile, "--config", "cpu-t2", "--checkpoint", "synthetic:tiny"}},
      {"--checkpoint", {"--checkpoint", "synthetic:tiny,synthetic:medium"}},
      {"--scenario", {"--scenario", "classic,window"}},
      {"--suite", {"--suite", Source("scenarios/real/suite.json")}},
      {"--scenarios-dir", {"--scenarios-dir", Source("scenarios")}},
      {"--config", {"--config", "reference,cpu-t2"}},
      {"--threads", {"--threads", "1,4"}},
      {"--math", {"--math", "portable,libm"}},
      {"--quant-dot", {"--quant-dot", "exact,int8"}},
      {"--timeout", {"--timeout", "37.5"}},
      {"--db", {"--db", (dir.path() / "my runs.db").string()}},
      {"--references-dir", {"--references-dir", dir.path().string()}},
  };
  const std::map<std::string, std::string> not_carried = {
      {"--engine", "a program outside the repository is not what bisect builds (bisect_advice.h)"},
      {"--build", "bisect builds every revision itself"},
      {"--jobs", "how many children at once: the same cells"},
      {"--cells-per-child", "how cells share children: the same cells and bits"},
  };
  CLI::App app;
  MatrixFlags flags;
  AddMatrixFlags(&app, &flags);
  int checked = 0;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_lnames().empty()) continue;
    const std::string name = "--" + option->get_lnames().front();
    if (name == "--help") continue;
    if (not_carried.count(name) > 0) continue;
    const auto it = carried.find(name);
    ASSERT_NE(it, carried.end()) << name << " is a matrix flag: carry it into the suggested "
                                 << "bisect (bisect_advice.cc) and give it a value here";
    const MatrixFlags given = Parse(it->second);
    const std::string line = BisectCommandFor(given);
    std::vector<std::string> words = ShellWords(line);
    ASSERT_GE(words.size(), 2u) << line;
    ASSERT_EQ(words[1], "bisect") << line;
    words.erase(words.begin(), words.begin() + 2);
    MatrixFlags suggested;
    ASSERT_NO_THROW(suggested = Parse(words)) << name << ": " << line;
    EXPECT_EQ(suggested.engine_profile, given.engine_profile) << line;
    EXPECT_EQ(suggested.checkpoints, given.checkpoints) << line;
    EXPECT_EQ(suggested.scenarios, given.scenarios) << line;
    EXPECT_EQ(suggested.suite, given.suite) << line;
    EXPECT_EQ(suggested.scenarios_dir, given.scenarios_dir) << line;
    EXPECT_EQ(suggested.configs, given.configs) << line;
    EXPECT_EQ(suggested.threads, given.threads) << line;
    EXPECT_EQ(suggested.math, given.math) << line;
    EXPECT_EQ(suggested.quant_dot, given.quant_dot) << line;
    EXPECT_EQ(suggested.timeout_seconds, given.timeout_seconds) << line;
    EXPECT_EQ(suggested.db, given.db) << line;
    EXPECT_EQ(ReferencesDir(suggested), ReferencesDir(given)) << line;
    EXPECT_EQ(Cells(suggested), Cells(given)) << name << ": " << line;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(carried.size()));
}

// A profile given as a file keeps its references beside it, unless
// --references-dir says otherwise (cli/matrix_flags.h ReferencesDir).
TEST(Suggestions, AProfileFilesReferencesLieBesideIt) {
  const std::string profile = Source("tests/standins/standin_profile.json");
  EXPECT_EQ(ReferencesDir(Parse({"--engine-profile", profile})),
            Source("tests/standins") + "/references");
  EXPECT_EQ(ReferencesDir(Parse({"--engine-profile", profile, "--references-dir", "/tmp"})),
            "/tmp");
  EXPECT_EQ(ReferencesDir(Parse({})), GetPaths().references);
}

}  // namespace
}  // namespace samebits::cli
