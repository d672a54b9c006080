// The real gate on the real checkpoints: `samebits gate --suite
// scenarios/real/suite.json` against the committed references must exit 0.
// It catches an engine change that moves any bit of the real files' logits
// (or a reference line that was not regenerated with it). Skipped only when
// ../shared/checkpoints (the files, outside the repository) is absent.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include "harness/store/store.h"
#include "tests/harness/harness_test_util.h"
#include "tests/support/data_folder.h"

namespace samebits::harness {
namespace {

namespace fs = std::filesystem;
using testing::SamebitsProgram;
using testing::TempDir;

// Returns `s` quoted for /bin/sh.
std::string Quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `samebits gate -q --suite SUITE --config CONFIGS` from the project
// root against the committed references, storing into `db`; returns its exit
// status and, in `output`, what it printed.
int GateSuite(const std::string& suite, const std::string& configs, const std::string& db,
              std::string* output) {
  const fs::path root = SAMEBITS_SOURCE_DIR;
  // Run from the project root: the harness resolves the suite's checkpoint
  // specs against it, and finds the references there.
  const std::string command = "cd " + Quoted(root.string()) + " && " + Quoted(SamebitsProgram()) +
                              " gate -q --suite " + Quoted(suite) + " --config " + configs +
                              " -j 2 --timeout 60 --references-dir references --db " + Quoted(db) +
                              " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *output = "cannot run: " + command;
    return -1;
  }
  *output = command + "\n";
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output->append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(RealSuite, GateOnTheRealCheckpointsMatchesTheCommittedReferences) {
  SAMEBITS_SKIP_WITHOUT_DATA(data_folder::Path("checkpoints"));
  TempDir dir;
  std::string output;
  EXPECT_EQ(
      GateSuite("scenarios/real/suite.json", "reference,cpu-t2", dir.File("runs.db"), &output), 0)
      << output;
  // Every pair ran and passed: a missing file would be UNSUPPORTED, which
  // does not fail a gate. The suite holds 56 pairs (25 checkpoints; two of
  // them also run the three chunk-* equivalence scenarios, and the seven
  // with new operations the 48-token prompt across their windows).
  store::Store store(dir.File("runs.db"));
  const RunResult run = store.LoadRun(store.LatestRunId());
  EXPECT_EQ(run.cells.size(), 56u * 2u);
  for (const CellResult& c : run.cells) {
    EXPECT_EQ(c.code, ResultCode::kPass)
        << c.checkpoint << " " << c.scenario << " " << c.config.name << ": " << c.message;
  }
}

// ci/cross.sh gates these suites under qemu-user (.ci/run the quick one):
// each must load, name scenarios that exist, and have a committed reference
// for every cell (a gate without one exits 1), or the cross run would fail
// only on the emulated platform, for a reason that has nothing to do with it.
TEST(RealSuite, CrossSuitesRunOnThisHostAgainstTheCommittedReferences) {
  SAMEBITS_SKIP_WITHOUT_DATA(data_folder::Path("checkpoints"));
  // Pairs x scenarios: 12 checkpoints, 28 cells; 9 checkpoints, 23 cells.
  const std::pair<const char*, size_t> suites[] = {{"ci/cross-quick-suite.json", 28},
                                                   {"ci/cross-quantized-suite.json", 23}};
  for (const auto& [suite, cells] : suites) {
    TempDir dir;
    std::string output;
    EXPECT_EQ(GateSuite(suite, "cpu-t2", dir.File("runs.db"), &output), 0) << output;
    store::Store store(dir.File("runs.db"));
    const RunResult run = store.LoadRun(store.LatestRunId());
    EXPECT_EQ(run.cells.size(), cells) << suite;
    for (const CellResult& c : run.cells) {
      EXPECT_EQ(c.code, ResultCode::kPass) << suite << ": " << c.checkpoint << " " << c.scenario;
    }
  }
}

}  // namespace
}  // namespace samebits::harness
