// Roll-ups (harness/analysis/rollup.h): many divergences or failed cells of
// one configuration read as one line, with the count and the first place.
#include "harness/analysis/rollup.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace samebits::harness {
namespace {

Divergence Div(const std::string& checkpoint, const std::string& scenario,
               const std::string& config_b, int step) {
  Divergence d;
  d.checkpoint = checkpoint;
  d.scenario = scenario;
  d.config_a = "reference";
  d.config_b = config_b;
  d.step_index = step;
  d.kind = step == 0 ? "prefill" : "decode";
  d.position = 10 + step;
  d.layer = 0;
  d.op = "q";
  d.detail = "xxh3_64 differs";
  return d;
}

TEST(RollUpDivergences, ManyOfOneConfigurationAreOneLine) {
  std::vector<Divergence> divs;
  for (const char* ckpt : {"synthetic:tiny", "synthetic:wide", "synthetic:gqa"}) {
    for (const char* scen : {"classic", "window", "sampled"})
      divs.push_back(Div(ckpt, scen, "cpu-avx2", 0));
  }
  const std::vector<std::string> lines = RollUpDivergences(divs);
  ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0], "All 9 divergences are cpu-avx2:");
  EXPECT_NE(lines[1].find("cpu-avx2 differs from reference in 9 checkpoint x scenario pairs "
                          "(3 checkpoints, 3 scenarios), all first at step 0 (prefill, "
                          "position 10), layer 0 op q"),
            std::string::npos)
      << lines[1];
}

TEST(RollUpDivergences, DifferentPlacesNameTheFirstAndOnePairStaysWhole) {
  std::vector<Divergence> divs = {Div("synthetic:tiny", "classic", "cpu-avx2", 0),
                                  Div("synthetic:tiny", "window", "cpu-avx2", 3),
                                  Div("synthetic:tiny", "classic", "cpu-t2", 1)};
  const std::vector<std::string> lines = RollUpDivergences(divs);
  ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);  // two configurations: no "All"
  EXPECT_NE(lines[0].find("in 2 checkpoint x scenario pairs (1 checkpoint, 2 scenarios), first at "
                          "different places; the first, synthetic:tiny classic, at step 0"),
            std::string::npos)
      << lines[0];
  // A lone divergence keeps its full line.
  EXPECT_NE(lines[1].find("synthetic:tiny classic: reference and cpu-t2 first differ at step 1"),
            std::string::npos)
      << lines[1];
  EXPECT_TRUE(RollUpDivergences({}).empty());
}

TEST(RollUpFailedCells, OneLinePerCodeAndConfiguration) {
  RunResult run;
  auto add = [&](const std::string& scenario, const std::string& config, ResultCode code) {
    CellResult c;
    c.checkpoint = "synthetic:tiny";
    c.scenario = scenario;
    c.config.name = config;
    c.code = code;
    c.message = scenario + " message";
    c.stderr_tail = "line 1\nline 2\nline 3\n";
    run.cells.push_back(c);
  };
  for (const char* s : {"classic", "window", "sampled"}) add(s, "cpu-avx2", ResultCode::kFail);
  add("classic", "cpu-t2", ResultCode::kPass);
  add("classic", "cpu-t3", ResultCode::kTimeout);
  const std::vector<std::string> lines = RollUpFailedCells(run, 2);
  ASSERT_EQ(lines.size(), 4u) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0],
            "FAIL: 3 cells of cpu-avx2 (1 checkpoint, 3 scenarios); the first, synthetic:tiny "
            "classic: classic message");
  EXPECT_EQ(lines[1], "TIMEOUT: synthetic:tiny classic cpu-t3: classic message");
  EXPECT_EQ(lines[2], "    stderr: line 2");  // the last two lines of a child that did not finish
  EXPECT_EQ(lines[3], "    stderr: line 3");
}

}  // namespace
}  // namespace samebits::harness
