// ULP statistics end to end: the stand-in engine writes raw logit dumps for
// cpu-t1 and cpu-t3 (whose step 3 has one value one ulp away), the cells are
// stored with their dump paths, and `samebits report` reads the dumps.
// The cells are made here from the stand-in's own protocol output, so this
// tests the store and the report alone; standin_gate_dumps_test.cc has the
// runner and the gate asking for the dumps.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "harness/analysis/results.h"
#include "harness/store/store.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

// Returns the cell the stand-in produces for `threads` with its dump at
// `dump`, parsed from its protocol lines.
harness::CellResult RunStandin(const std::string& engine, const std::string& scenario, int threads,
                               const std::string& dump) {
  const CommandResult r =
      RunCommand({engine, "run", "--checkpoint", "synthetic:tiny", "--scenario", scenario,
                  "--threads", std::to_string(threads), "--dump-logits", dump});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  harness::CellResult cell;
  cell.checkpoint = "synthetic:tiny";
  cell.scenario = "standin";
  cell.config.name = threads == 1 ? "cpu-t1" : "cpu-t" + std::to_string(threads);
  cell.config.threads = threads;
  cell.code = harness::ResultCode::kPass;
  cell.dump_path = dump;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("type") == "hello") cell.vocab_size = j.at("checkpoint").at("vocab_size");
    if (j.at("type") != "step") continue;
    harness::StepRecord s;
    s.index = j.at("index");
    s.kind = j.at("kind");
    s.position = j.at("position");
    s.token = j.at("token");
    s.argmax = j.at("argmax");
    s.fnv1a64 = std::stoull(j.at("fnv1a64").get<std::string>(), nullptr, 16);
    s.xxh3_64 = std::stoull(j.at("xxh3_64").get<std::string>(), nullptr, 16);
    cell.steps.push_back(s);
  }
  return cell;
}

TEST(StandinDumps, ReportShowsUlpStatisticsOfTheDivergingStep) {
  TempDir dir("standin_dumps");
  const std::string engine = FaultyEngine(dir.path(), "wrong-hash-at-3-threads");
  const std::string scenario = WriteScenario(dir.path());
  harness::RunResult run;
  run.started_at = "2026-11-30T00:00:00Z";
  run.cells.push_back(RunStandin(engine, scenario, 1, (dir.path() / "t1.f32").string()));
  run.cells.push_back(RunStandin(engine, scenario, 3, (dir.path() / "t3.f32").string()));
  run.cells[1].code = harness::ResultCode::kFail;
  run.diagnosis.kind = harness::Diagnosis::Kind::kIdentityBroken;
  run.diagnosis.headline = "cpu-t3 differs";
  const std::string db = (dir.path() / "runs.db").string();
  { store::Store(db).SaveRun(run); }

  const CommandResult r =
      RunCommand({BinDir() + "/samebits", "report", "latest", "--format", "json", "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  ASSERT_EQ(j.at("logit_comparisons").size(), 1u) << r.output;
  const auto& c = j.at("logit_comparisons")[0];
  EXPECT_TRUE(c.at("error").is_null()) << c.dump();
  EXPECT_EQ(c.at("config_a"), "cpu-t1");
  EXPECT_EQ(c.at("config_b"), "cpu-t3");
  EXPECT_EQ(c.at("vocab_size"), 32);
  ASSERT_EQ(c.at("steps").size(), 1u) << c.dump();
  EXPECT_EQ(c.at("steps")[0].at("step_index"), 3);
  EXPECT_EQ(c.at("steps")[0].at("differing"), 1);
  EXPECT_EQ(c.at("steps")[0].at("max_ulp"), 1);
  EXPECT_EQ(c.at("steps")[0].at("argmax_changed"), false);

  const CommandResult md = RunCommand({BinDir() + "/samebits", "report", "latest", "--db", db});
  EXPECT_NE(md.output.find("| cpu-t1 vs cpu-t3 | 3 | 1 of 32 | 1 |"), std::string::npos)
      << md.output;
}

}  // namespace
}  // namespace samebits::standin
