// The numeric contract across shared children: a cell served by
// samebits-engine's `run --serve` beside other cells gives exactly the
// records and the dump it gives in a process of its own. Each configuration
// below serves every (checkpoint, scenario) cell in one process, in an
// order that moves between checkpoints and comes back (so a kept checkpoint
// is reused and replaced), and each cell's `hello` and `step` lines and its
// dump's bytes are compared with those of the cell run alone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/runner/cell_arguments.h"
#include "harness/runner/cell_runner.h"
#include "harness/runner/child.h"
#include "harness/runner/matrix.h"
#include "harness/runner/shared_child.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/own_profile.h"
#include "tests/support/data_folder.h"

namespace samebits::runner {
namespace {

using harness::testing::BinDir;
using harness::testing::ReadFile;
using harness::testing::TempDir;

std::string Source(const std::string& relative) {
  return std::string(SAMEBITS_SOURCE_DIR) + "/" + relative;
}

// Returns the `hello` and `step` lines of a transcript (`done` holds timings).
std::vector<std::string> HelloAndSteps(const std::string& stdout_text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end; (end = stdout_text.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = stdout_text.substr(start, end - start);
    if (line.rfind(R"({"type":"done")", 0) != 0) lines.push_back(line);
  }
  return lines;
}

const runner::EngineProfile& Own() {
  return *harness::testing::OwnProfile();
}

TEST(SharedChildBits, AServedCellGivesTheBitsItGivesAlone) {
  const std::string stories_file = data_folder::Path("checkpoints/stories260K.gguf");
  SAMEBITS_SKIP_WITHOUT_DATA(stories_file);
  const std::string stories = "gguf:" + stories_file;
  // tiny and medium-q4_k come back after another checkpoint; a file between.
  const std::vector<std::string> checkpoints = {"synthetic:tiny",        "synthetic:gemma",
                                                "synthetic:medium-q4_k", stories,
                                                "synthetic:tiny",        "synthetic:medium-q4_k"};
  const std::vector<std::string> scenarios = {"classic", "window"};
  const std::vector<harness::Configuration> configs = {
      OwnEngineConfiguration(Own(), "reference"), OwnEngineConfiguration(Own(), "cpu-t2-libm"),
      OwnEngineConfiguration(Own(), "cpu-t2-b4"),
      OwnEngineConfiguration(Own(), "cpu-t3-b8-staggered")};
  TempDir dumps;
  RunnerOptions options;
  options.engine = BinDir() + "/samebits-engine";
  options.timeout_seconds = 120;
  options.own_profile = &Own();
  int compared = 0;
  for (const harness::Configuration& config : configs) {
    std::vector<std::string> serve_args = ConfigurationArguments(Own(), config, /*trace=*/false);
    serve_args.push_back(kServeFlag);
    Cell first;
    first.config = config;
    ChildSession session(CellChildSpec(first, options, serve_args));
    int n = 0;
    for (const std::string& checkpoint : checkpoints) {
      for (const std::string& scenario : scenarios) {
        std::string trace = checkpoint;
        trace += " " + scenario;
        trace += " " + config.kernels;
        trace += " t" + std::to_string(config.threads);
        trace += " " + config.math;
        trace += " b" + std::to_string(config.batch);
        SCOPED_TRACE(trace);
        Cell cell;
        cell.checkpoint = checkpoint;
        cell.scenario = scenario;
        cell.scenario_file = Source("scenarios/" + scenario + ".json");
        cell.config = config;
        const std::string served_dump = dumps.File("served" + std::to_string(n));
        const std::string alone_dump = dumps.File("alone" + std::to_string(n));
        ++n;
        protocol::TranscriptReader reader;
        const ChildOutcome served =
            session.Serve(ServeRequest(Own(), cell, served_dump), [&](std::string_view line) {
              reader.FeedLine(line);
              if (reader.failed()) return ChildLine::kBreaksRequest;
              return reader.so_far().done ? ChildLine::kEndsRequest : ChildLine::kMore;
            });
        ASSERT_TRUE(session.alive()) << served.stdout_text << served.stderr_tail;
        const ChildOutcome alone =
            RunChild(CellChildSpec(cell, options, EngineArguments(Own(), cell, false, alone_dump)));
        ASSERT_EQ(alone.exit_code, 0) << alone.stderr_tail;
        const std::vector<std::string> served_lines = HelloAndSteps(served.stdout_text);
        ASSERT_GT(served_lines.size(), 1u);
        EXPECT_EQ(served_lines, HelloAndSteps(alone.stdout_text));
        const std::string served_bytes = ReadFile(served_dump);
        ASSERT_FALSE(served_bytes.empty());
        EXPECT_TRUE(served_bytes == ReadFile(alone_dump)) << "the dumps differ";
        ++compared;
      }
    }
    const ChildOutcome end = session.Finish();
    EXPECT_EQ(end.exit_code, 0);
    EXPECT_EQ(end.signal, 0);
    EXPECT_TRUE(end.stdout_text.empty()) << end.stdout_text;
  }
  EXPECT_EQ(compared, 48);
}

}  // namespace
}  // namespace samebits::runner
