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

#include "harness/store/store.h"
#include "tests/harness/harness_test_util.h"

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

TEST(RealSuite, GateOnTheRealCheckpointsMatchesTheCommittedReferences) {
  const fs::path root = SAMEBITS_SOURCE_DIR;
  const fs::path shared = root / ".." / "shared" / "checkpoints";
  if (!fs::is_directory(shared)) {
    GTEST_SKIP() << "no real checkpoints: " << shared.lexically_normal().string()
                 << " is absent (the suite's files live outside the repository)";
  }
  TempDir dir;
  // Run from the project root: the harness resolves the suite's checkpoint
  // specs against it, and finds the references there.
  const std::string command =
      "cd " + Quoted(root.string()) + " && " + Quoted(SamebitsProgram()) +
      " gate -q --suite scenarios/real/suite.json --config reference,cpu-t2 -j 2 --timeout 60"
      " --references-dir references --db " +
      Quoted(dir.File("runs.db")) + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr) << command;
  std::string output;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << command << "\n" << output;
  EXPECT_EQ(WEXITSTATUS(status), 0) << command << "\n" << output;
  // Every pair ran and passed: a missing file would be UNSUPPORTED, which
  // does not fail a gate. The suite holds 42 pairs (18 checkpoints; two of
  // them also run the three chunk-* equivalence scenarios).
  store::Store store(dir.File("runs.db"));
  const RunResult run = store.LoadRun(store.LatestRunId());
  EXPECT_EQ(run.cells.size(), 42u * 2u);
  for (const CellResult& c : run.cells) {
    EXPECT_EQ(c.code, ResultCode::kPass)
        << c.checkpoint << " " << c.scenario << " " << c.config.name << ": " << c.message;
  }
}

}  // namespace
}  // namespace samebits::harness
