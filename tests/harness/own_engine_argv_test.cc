// samebits-engine's argv comes from its profile (engines/samebits.json), as
// every engine's does (harness/runner/cell_arguments.h). The harness wrote
// it by hand before; this test keeps a copy of that hand builder as an
// oracle and holds the profile-built argv to it, byte for byte, over every
// configuration of the default matrix and more that names can spell, so the
// default gate's children are given exactly what they always were.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/analysis/numeric_profile.h"
#include "harness/runner/cell_arguments.h"
#include "harness/runner/engine_profile.h"
#include "harness/runner/matrix.h"
#include "tests/harness/own_profile.h"

namespace samebits::runner {
namespace {

// The hand builder as harness/runner/matrix.cc had it before the profile
// built samebits-engine's argv: the oracle, never to be edited to make the
// test pass.
namespace hand_built {

std::vector<std::string> ConfigurationArguments(const harness::Configuration& c, bool trace) {
  std::vector<std::string> args = {
      "run",   "--kernels", c.kernels, "--threads", std::to_string(c.threads),
      "--isa", c.isa,       "--math",  c.math};
  if (c.quant_dot != harness::kExactQuantDot) {
    args.push_back("--quant-dot");
    args.push_back(c.quant_dot);
  }
  if (c.gemv_chunk_bytes > 0) {
    args.push_back("--gemv-chunk-bytes");
    args.push_back(std::to_string(c.gemv_chunk_bytes));
  }
  if (c.batch > 1) {
    args.insert(args.end(), {"--batch", std::to_string(c.batch), "--batch-seed",
                             std::to_string(c.batch_seed), "--batch-schedule", c.batch_schedule});
  }
  if (trace) args.push_back("--trace");
  return args;
}

std::vector<std::string> CellOwnArguments(const Cell& cell, const std::string& dump_file) {
  std::vector<std::string> args = {"--checkpoint", EngineCheckpoint(cell), "--scenario",
                                   cell.scenario_file};
  if (!dump_file.empty()) {
    args.push_back("--dump-logits");
    args.push_back(dump_file);
  }
  return args;
}

std::vector<std::string> EngineArguments(const Cell& cell, bool trace,
                                         const std::string& dump_file) {
  const std::vector<std::string> config = ConfigurationArguments(cell.config, trace);
  const std::vector<std::string> own = CellOwnArguments(cell, "");
  std::vector<std::string> args = {config.front()};
  args.insert(args.end(), own.begin(), own.end());
  args.insert(args.end(), config.begin() + 1, config.end());
  if (!dump_file.empty()) {
    args.push_back("--dump-logits");
    args.push_back(dump_file);
  }
  return args;
}

}  // namespace hand_built

const EngineProfile& Own() {
  return *harness::testing::OwnProfile();
}

// The axes the hand builder knew. Axes added to the profile since (the
// tuning knobs, issue 44) never reached it: their flags follow its
// configuration's, in the profile's axis order, before --trace.
const std::set<std::string> kHandBuiltAxes = {"kernels", "threads",        "isa",
                                              "math",    "quant_dot",      "gemv_chunk_bytes",
                                              "batch",   "batch_schedule", "batch_seed"};

// Returns the flags of `config`'s axes the hand builder did not know, for
// those not at their default.
std::vector<std::string> ProfileOnlyArguments(const EngineProfile& p,
                                              const harness::Configuration& config) {
  const EngineConfiguration values = ProfileConfiguration(p, config);
  std::vector<std::string> args;
  for (const EngineAxis& axis : p.axes) {
    if (kHandBuiltAxes.count(axis.name) != 0) continue;
    const std::string& value = values.values.at(axis.name);
    if (axis.default_value && value == *axis.default_value) continue;
    for (const std::string& a : axis.argv) args.push_back(a == "{value}" ? value : a);
  }
  return args;
}

// The hand builder's argv (without --trace or a dump), then `extra`, then
// --trace and the dump as the hand builder placed them.
std::vector<std::string> OracleWith(std::vector<std::string> args,
                                    const std::vector<std::string>& extra, bool trace,
                                    const std::string& dump_file) {
  args.insert(args.end(), extra.begin(), extra.end());
  if (trace) args.push_back("--trace");
  if (!dump_file.empty()) args.insert(args.end(), {"--dump-logits", dump_file});
  return args;
}

// Names the default matrix does not make but a command line can: other
// thread counts, chunk sizes, every ISA and profile, batches with their
// schedules and seeds, and the ranges' ends.
const char* const kNamedConfigurations[] = {
    "cpu-t4",
    "cpu-t1024",
    "reference-t2",
    "reference-libm-int8",
    "cpu-t3-chunk16k",
    "cpu-t2-chunk1",
    "cpu-t7-chunk1099511627776",
    "cpu-scalar-libm",
    "cpu-avx512-int8",
    "cpu-neon-libm-int8",
    "cpu-t2-b4",
    "cpu-t3-b8-staggered",
    "cpu-avx2-b2-staggered-seed7",
    "cpu-t2-b64-seed9223372036854775807-libm-int8",
    "cpu-t5-chunk8k-avx2-b3-seed0-libm",
    "cpu-t2-ahead1024-int8",
    "cpu-t3-tm3-ahead1-avx2-int8",
};

// Returns every configuration the test checks: the default matrix under
// every --math and --quant-dot profile for several --threads lists, and the
// named ones.
std::vector<harness::Configuration> AllConfigurations(const EngineProfile& p) {
  std::vector<harness::Configuration> out;
  for (const std::vector<int>& threads :
       std::vector<std::vector<int>>{{1, 2, 3}, {1}, {4, 16, 64}}) {
    for (const harness::Configuration& c :
         DefaultConfigurations(p, threads, EnumeratedAxisValues(p, "math", "the test"), 8192,
                               EnumeratedAxisValues(p, "quant_dot", "the test"))) {
      out.push_back(c);
    }
  }
  for (const char* name : kNamedConfigurations) out.push_back(OwnEngineConfiguration(p, name));
  return out;
}

// Returns the cells of `config` the test runs: a synthetic checkpoint, and
// a file the engine is given by another spec than the cell's key.
std::vector<Cell> CellsOf(const harness::Configuration& config) {
  Cell synthetic;
  synthetic.checkpoint = "synthetic:tiny";
  synthetic.scenario_file = "/s/classic.json";
  synthetic.scenario = "classic";
  synthetic.config = config;
  Cell file = synthetic;
  file.checkpoint = "gguf:../shared/checkpoints/x.gguf";
  file.engine_checkpoint = "gguf:/abs/shared/checkpoints/x.gguf";
  file.scenario_file = "/s/real/story.json";
  return {synthetic, file};
}

TEST(OwnEngineArgv, TheProfileBuildsTheHandBuiltArgvByteForByte) {
  const EngineProfile& p = *harness::testing::OwnProfile();
  const std::vector<harness::Configuration> configs = AllConfigurations(p);
  // The default matrix (11 configurations with --threads 1,2,3) under 4
  // numeric profiles, for three --threads lists, and the named ones: 139
  // today, far from a handful.
  ASSERT_GT(configs.size(), 100u);
  size_t compared = 0;
  size_t with_profile_only_axes = 0;
  for (const harness::Configuration& c : configs) {
    const std::vector<std::string> extra = ProfileOnlyArguments(p, c);
    with_profile_only_axes += extra.empty() ? 0 : 1;
    for (const Cell& cell : CellsOf(c)) {
      for (const bool trace : {false, true}) {
        for (const std::string dump : {"", "/d/x.f32"}) {
          EXPECT_EQ(EngineArguments(p, cell, trace, dump),
                    OracleWith(hand_built::EngineArguments(cell, false, ""), extra, trace, dump))
              << c.name << " trace " << trace << " dump '" << dump << "'";
          EXPECT_EQ(CellOwnArguments(p, cell, dump), hand_built::CellOwnArguments(cell, dump))
              << c.name;
          ++compared;
        }
      }
    }
    for (const bool trace : {false, true}) {
      EXPECT_EQ(ConfigurationArguments(p, c, trace),
                OracleWith(hand_built::ConfigurationArguments(c, false), extra, trace, ""))
          << c.name << " trace " << trace;
    }
  }
  EXPECT_EQ(compared, configs.size() * 8);
  // Most are the hand builder's byte for byte; the tuning knobs' default
  // configuration adds its flags in every profile and --threads list.
  EXPECT_GT(with_profile_only_axes, 0u);
  EXPECT_LT(with_profile_only_axes, configs.size() / 4);
}

// Every axis's flag moves with its value: a profile that wrote one value
// for every configuration would pass the comparison above only if the
// oracle did the same, so the values are seen to vary.
TEST(OwnEngineArgv, TheConfigurationsCheckedVaryEveryAxis) {
  const EngineProfile& p = *harness::testing::OwnProfile();
  std::map<std::string, std::set<std::string>> seen;
  for (const harness::Configuration& c : AllConfigurations(p)) {
    for (const auto& [axis, value] : ProfileConfiguration(p, c).values) seen[axis].insert(value);
  }
  for (const EngineAxis& axis : p.axes) {
    EXPECT_GE(seen[axis.name].size(), 2u) << axis.name << " takes one value only";
  }
}

// The order is the profile's `argv_order`: without it the same flags come
// in axis order, which is another command line (the engine would read it
// alike, but the gate's children would no longer be given what they were).
TEST(OwnEngineArgv, WithoutArgvOrderTheFlagsComeInAxisOrder) {
  const EngineProfile& p = *harness::testing::OwnProfile();
  EngineProfile axis_order = p;
  axis_order.argv_order.clear();
  for (const EngineAxis& axis : p.axes) axis_order.argv_order.push_back(axis.name);
  const harness::Configuration c = OwnEngineConfiguration(p, "cpu-t2-chunk8k-int8");
  const std::vector<std::string> want = ConfigurationArguments(p, c, false);
  const std::vector<std::string> other = ConfigurationArguments(axis_order, c, false);
  EXPECT_NE(other, want);
  EXPECT_EQ(std::multiset<std::string>(other.begin(), other.end()),
            std::multiset<std::string>(want.begin(), want.end()));
}

// The command lines the gate's children get, written out: a golden pin
// beside the oracle above.
TEST(OwnEngineArgv, EngineArgumentsCarryTheWholeConfiguration) {
  Cell cell;
  cell.checkpoint = "synthetic:tiny";
  cell.scenario_file = "/s/classic.json";
  cell.config = OwnEngineConfiguration(Own(), "cpu-t3-chunk8k-avx2-libm");
  const std::vector<std::string> args = EngineArguments(Own(), cell, true);
  EXPECT_EQ(args, (std::vector<std::string>{"run", "--checkpoint", "synthetic:tiny", "--scenario",
                                            "/s/classic.json", "--kernels", "cpu", "--threads", "3",
                                            "--isa", "avx2", "--math", "libm", "--gemv-chunk-bytes",
                                            "8192", "--trace"}));
}

// Only an int8 cell names its dot product: an exact cell's command line is
// what it was before --quant-dot, so engines older than it still run it.
TEST(OwnEngineArgv, EngineArgumentsNameTheQuantDotProfileOnlyWhenNotExact) {
  Cell cell;
  cell.checkpoint = "synthetic:tiny-q4_0";
  cell.scenario_file = "/s/classic.json";
  cell.config = OwnEngineConfiguration(Own(), "cpu-t1");
  const std::vector<std::string> exact = EngineArguments(Own(), cell, false);
  EXPECT_EQ(std::find(exact.begin(), exact.end(), "--quant-dot"), exact.end());
  cell.config = OwnEngineConfiguration(Own(), "cpu-t1-int8");
  const std::vector<std::string> int8 = EngineArguments(Own(), cell, false);
  EXPECT_EQ(int8, (std::vector<std::string>{"run", "--checkpoint", "synthetic:tiny-q4_0",
                                            "--scenario", "/s/classic.json", "--kernels", "cpu",
                                            "--threads", "1", "--isa", "auto", "--math", "portable",
                                            "--quant-dot", "int8"}));
}

TEST(OwnEngineArgv, EngineArgumentsAskForADumpOnlyWithAFile) {
  Cell cell;
  cell.checkpoint = "synthetic:tiny";
  cell.scenario_file = "/s/classic.json";
  cell.config = OwnEngineConfiguration(Own(), "cpu-t1");
  const std::vector<std::string> plain = EngineArguments(Own(), cell, false);
  EXPECT_EQ(std::find(plain.begin(), plain.end(), "--dump-logits"), plain.end());
  const std::vector<std::string> dumped = EngineArguments(Own(), cell, false, "/d/x.f32");
  ASSERT_GE(dumped.size(), 2u);
  EXPECT_EQ(dumped[dumped.size() - 2], "--dump-logits");
  EXPECT_EQ(dumped.back(), "/d/x.f32");
}

TEST(OwnEngineArgv, OnlyABatchedCellGivesTheEngineTheBatchFlags) {
  Cell cell;
  cell.checkpoint = "synthetic:tiny";
  cell.scenario_file = "/s/classic.json";
  cell.config = OwnEngineConfiguration(Own(), "cpu-t2");
  const std::vector<std::string> alone = EngineArguments(Own(), cell, false);
  EXPECT_EQ(alone, (std::vector<std::string>{"run", "--checkpoint", "synthetic:tiny", "--scenario",
                                             "/s/classic.json", "--kernels", "cpu", "--threads",
                                             "2", "--isa", "auto", "--math", "portable"}));
  cell.config = OwnEngineConfiguration(Own(), "cpu-t2-b8-staggered-seed5");
  std::vector<std::string> batched = EngineArguments(Own(), cell, false);
  const std::vector<std::string> tail = {"--batch",          "8",        "--batch-seed", "5",
                                         "--batch-schedule", "staggered"};
  ASSERT_EQ(batched.size(), alone.size() + tail.size());
  EXPECT_EQ(std::vector<std::string>(batched.begin() + static_cast<std::ptrdiff_t>(alone.size()),
                                     batched.end()),
            tail);
}

}  // namespace
}  // namespace samebits::runner
