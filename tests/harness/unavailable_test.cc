// Cells this machine can never run, as the engine says (runner/unavailable.h):
// the engine's `capabilities` probe lists exactly the ISAs it lacks, a
// default selection leaves their cells out with one line saying which and
// why, and naming them still runs them as UNSUPPORTED.
#include "harness/runner/unavailable.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/kernels/kernels.h"
#include "harness/runner/child.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::runner {
namespace {

using harness::testing::BinDir;
using harness::testing::SamebitsProgram;
using harness::testing::TempDir;

Cell CellOf(const std::string& config, const std::string& isa) {
  Cell cell;
  cell.checkpoint = "synthetic:tiny";
  cell.scenario = "classic";
  cell.config.name = config;
  cell.config.isa = isa;
  return cell;
}

TEST(Unavailable, CellsOfAValueTheEngineCannotRunAreLeftOutWithOneLine) {
  std::vector<Cell> cells = {CellOf("reference", "auto"), CellOf("cpu-neon", "neon"),
                             CellOf("cpu-avx2", "avx2"), CellOf("cpu-neon", "neon"),
                             CellOf("cpu-neon-libm", "neon")};
  protocol::Capabilities capabilities;
  capabilities.unavailable = {{"isa", "neon", "no NEON on x86_64"},
                              {"isa", "avx512", "no AVX-512 here"},  // no cell of it
                              {"sum_order", "reverse", "an axis of another engine"}};
  const std::vector<std::string> notes = LeaveOutUnavailable(cells, capabilities);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "left out 3 cells of cpu-neon, cpu-neon-libm: no NEON on x86_64");
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].config.name, "reference");
  EXPECT_EQ(cells[1].config.name, "cpu-avx2");
}

TEST(Unavailable, NamedCellsOfAValueTheEngineCannotRunAreMarkedWithItsReason) {
  std::vector<Cell> cells = {CellOf("reference", "auto"), CellOf("cpu-neon", "neon"),
                             CellOf("cpu-avx2", "avx2")};
  cells[2].supported = false;  // already UNSUPPORTED for another reason: kept as it was
  cells[2].unsupported_reason = "the checkpoint file is missing";
  protocol::Capabilities capabilities;
  capabilities.unavailable = {{"isa", "neon", "no NEON on x86_64"},
                              {"isa", "avx2", "no AVX2 here"},
                              {"sum_order", "reverse", "an axis of another engine"}};
  MarkUnavailable(cells, capabilities);
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_TRUE(cells[0].supported);
  EXPECT_FALSE(cells[1].supported);
  EXPECT_EQ(cells[1].unsupported_reason, "no NEON on x86_64");
  EXPECT_FALSE(cells[2].supported);
  EXPECT_EQ(cells[2].unsupported_reason, "the checkpoint file is missing");
}

// The fake engine answers the probe for its made-up x86_64 machine,
// whatever the host (as a profile's engine would be asked; a program given
// by path is not: its cells answer for themselves, cli_test.cc).
TEST(Unavailable, TheFakeEnginesProbeAnswersForItsMadeUpMachine) {
  std::string why;
  const std::optional<protocol::Capabilities> fake =
      ProbeEngine(BinDir() + "/samebits-fake-engine", {"capabilities"}, &why);
  ASSERT_TRUE(fake.has_value()) << why;
  ASSERT_EQ(fake->unavailable.size(), 2u);
  EXPECT_EQ(fake->unavailable[0].value, "avx512");
  EXPECT_EQ(fake->unavailable[1].value, "neon");
  EXPECT_EQ(fake->unavailable[1].reason, "the fake engine's made-up x86_64 machine has no neon");
}

// A named configuration the engine's probe says it cannot run is listed
// UNSUPPORTED with the engine's reason, before any cell's child starts.
TEST(Unavailable, ANamedConfigurationTheEngineCannotRunIsListedUnsupported) {
  std::string why;
  const std::optional<protocol::Capabilities> own =
      ProbeEngine(BinDir() + "/samebits-engine", {"capabilities"}, &why);
  ASSERT_TRUE(own.has_value()) << why;
  if (own->unavailable.empty()) GTEST_SKIP() << "this machine runs every ISA";
  const protocol::Unavailable& lacking = own->unavailable.front();
  ChildSpec spec;
  spec.program = SamebitsProgram();
  spec.args = {"run",        "--list",  "--checkpoint", "synthetic:tiny",
               "--scenario", "classic", "--config",     "cpu-t1,cpu-" + lacking.value};
  spec.env = ChildEnvironment({});
  spec.timeout_seconds = 60;
  const ChildOutcome listed = RunChild(spec);
  EXPECT_EQ(listed.exit_code, 0) << listed.stdout_text << listed.stderr_tail;
  EXPECT_EQ(listed.stdout_text, "synthetic:tiny classic cpu-t1\nsynthetic:tiny classic cpu-" +
                                    lacking.value + "  (UNSUPPORTED: " + lacking.reason + ")\n");
}

TEST(Unavailable, TheEnginesProbeListsExactlyTheIsasItLacks) {
  std::string why;
  const std::optional<protocol::Capabilities> capabilities =
      ProbeEngine(BinDir() + "/samebits-engine", {"capabilities"}, &why);
  ASSERT_TRUE(capabilities.has_value()) << why;
  EXPECT_TRUE(capabilities->serve);  // run --serve (engine/cli/serve.h)
  std::vector<std::string> listed;
  for (const protocol::Unavailable& u : capabilities->unavailable) {
    EXPECT_EQ(u.axis, "isa");
    EXPECT_FALSE(u.reason.empty());
    listed.push_back(u.value);
  }
  std::vector<std::string> lacking;
  for (const kernels::IsaEntry& e : kernels::Isas()) {
    if (!kernels::IsaAvailable(e.isa)) lacking.push_back(e.name);
  }
  EXPECT_EQ(listed, lacking);
}

TEST(Unavailable, AProbeThatDoesNotAnswerWithTheRecordLeavesNothingOut) {
  std::string why;
  // The fake engine answers anything but its probe with a run's records.
  EXPECT_FALSE(ProbeEngine(BinDir() + "/samebits-fake-engine", {"capabilities", "--x"}, &why));
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(ProbeEngine("/bin/false", {}, &why));
  EXPECT_NE(why.find("exited with code 1"), std::string::npos) << why;
}

ChildOutcome Gate(const TempDir& dir, const std::vector<std::string>& more) {
  ChildSpec spec;
  spec.program = SamebitsProgram();
  spec.args = {"gate",
               "-q",
               "--checkpoint",
               "synthetic:tiny",
               "--scenario",
               "classic",
               "--db",
               dir.File("db"),
               "--references-dir",
               std::string(SAMEBITS_SOURCE_DIR) + "/references"};
  spec.args.insert(spec.args.end(), more.begin(), more.end());
  spec.env = ChildEnvironment({});
  spec.timeout_seconds = 120;
  return RunChild(spec);
}

// The default engine (no --engine) declares its probe in engines/samebits.json.
TEST(Unavailable, TheDefaultGateLeavesOutWhatTheEngineCannotRunAndNamedItIsUnsupported) {
  std::vector<std::string> lacking;
  for (const kernels::IsaEntry& e : kernels::Isas()) {
    if (!kernels::IsaAvailable(e.isa)) lacking.push_back(e.name);
  }
  if (lacking.empty()) GTEST_SKIP() << "this machine runs every ISA: nothing to leave out";
  const std::string isa = lacking.front();
  TempDir dir;
  const ChildOutcome by_default = Gate(dir, {});
  EXPECT_EQ(by_default.exit_code, 0) << by_default.stdout_text << by_default.stderr_tail;
  EXPECT_NE(by_default.stdout_text.find("left out 1 cell of cpu-" + isa + ": "), std::string::npos)
      << by_default.stdout_text;
  EXPECT_EQ(by_default.stdout_text.find("UNSUPPORTED"), std::string::npos)
      << "nothing it can never run is started or counted: " << by_default.stdout_text;
  const ChildOutcome named = Gate(dir, {"--config", "reference,cpu-" + isa});
  EXPECT_EQ(named.exit_code, 0) << named.stdout_text << named.stderr_tail;
  EXPECT_NE(named.stdout_text.find("UNSUPPORTED : 1"), std::string::npos) << named.stdout_text;
  EXPECT_EQ(named.stdout_text.find("left out"), std::string::npos) << named.stdout_text;
}

}  // namespace
}  // namespace samebits::runner
