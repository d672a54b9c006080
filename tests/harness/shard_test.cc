// Sharded gates (harness/analysis/shard.h, fleet_verdict.h): K/N is parsed
// strictly; the shards partition the cells; adding a checkpoint moves no
// cell and adding a shard moves cells only into the new one; the verdict
// takes the newest copy of a retried shard, names missing ones, and names a
// machine whose libm cells differ from another's with the cause.
#include "harness/analysis/shard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "harness/analysis/fleet_verdict.h"
#include "harness/analysis/judge.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::harness {
namespace {

using testing::MakeCell;
using testing::MakeStep;

TEST(Shard, KOfNIsParsedStrictly) {
  ShardSpec spec;
  EXPECT_EQ(ParseShardSpec("2/4", &spec), "");
  EXPECT_EQ(spec.index, 2);
  EXPECT_EQ(spec.count, 4);
  EXPECT_EQ(ParseShardSpec("1/1", &spec), "");
  for (const char* bad : {"", "2", "/4", "2/", "0/4", "5/4", "-1/4", "2/4/8", "a/b", "2 /4", "+2/4",
                          "2/0", "1/99999", "1/4097"}) {
    ShardSpec untouched{7, 9};
    const std::string problem = ParseShardSpec(bad, &untouched);
    EXPECT_NE(problem, "") << bad;
    EXPECT_NE(problem.find("expected K/N"), std::string::npos) << problem;
    EXPECT_EQ(untouched.index, 7) << bad;
  }
  EXPECT_NE(ParseShardSpec("5/4", &spec).find("shard 5 of 4 does not exist"), std::string::npos);
  EXPECT_EQ(ShardGroupProblem("run-123.4_a"), "");
  EXPECT_NE(ShardGroupProblem("a b").find("group id 'a b' may hold only"), std::string::npos);
}

// Returns the cells of `checkpoints` x 3 scenarios x 8 configurations.
std::vector<Cell> Matrix(const std::vector<std::string>& checkpoints) {
  std::vector<Cell> cells;
  for (const std::string& k : checkpoints) {
    for (const char* s : {"classic", "long", "extend"}) {
      for (const char* c : {"reference", "cpu-t1", "cpu-t2", "cpu-t3", "cpu-t3-chunk8k", "cpu-avx2",
                            "cpu-t2-b4", "cpu-t1-libm"}) {
        Cell cell;
        cell.checkpoint = k;
        cell.scenario = s;
        cell.config.name = c;
        cells.push_back(cell);
      }
    }
  }
  return cells;
}

std::string Key(const Cell& c) {
  return c.checkpoint + " " + c.scenario + " " + c.config.name;
}

TEST(Shard, TheShardsPartitionTheCells) {
  const std::vector<Cell> cells = Matrix({"synthetic:tiny", "synthetic:medium", "synthetic:wide"});
  for (int n : {1, 2, 3, 7}) {
    std::set<std::string> seen;
    size_t total = 0;
    for (int k = 1; k <= n; ++k) {
      const std::vector<Cell> share = CellsOfShard(cells, {k, n});
      if (n <= 3) EXPECT_FALSE(share.empty()) << k << "/" << n;
      total += share.size();
      for (const Cell& c : share) {
        EXPECT_TRUE(seen.insert(Key(c)).second) << Key(c) << " in two shards of " << n;
        EXPECT_EQ(ShardOfCell(c.checkpoint, c.scenario, c.config.name, n), k);
      }
    }
    EXPECT_EQ(total, cells.size()) << n;
  }
}

TEST(Shard, AddingACheckpointOrAShardMovesFewCells) {
  const std::vector<Cell> before = Matrix({"synthetic:tiny", "synthetic:medium"});
  for (const Cell& c : before) {
    EXPECT_EQ(ShardOfCell(c.checkpoint, c.scenario, c.config.name, 4),
              ShardOfCell(c.checkpoint, c.scenario, c.config.name, 4));
  }
  // A new checkpoint's cells land somewhere; no old cell moves (the
  // shard depends on the cell's own key only).
  const std::vector<Cell> after = Matrix({"synthetic:tiny", "synthetic:wide", "synthetic:medium"});
  for (int k = 1; k <= 4; ++k) {
    std::set<std::string> old_share;
    for (const Cell& c : CellsOfShard(before, {k, 4})) old_share.insert(Key(c));
    std::set<std::string> new_share;
    for (const Cell& c : CellsOfShard(after, {k, 4}))
      if (c.checkpoint != "synthetic:wide") new_share.insert(Key(c));
    EXPECT_EQ(old_share, new_share) << k;
  }
  // From 4 to 5 shards, a cell either stays or moves to the new shard 5.
  int moved = 0;
  for (const Cell& c : before) {
    const int four = ShardOfCell(c.checkpoint, c.scenario, c.config.name, 4);
    const int five = ShardOfCell(c.checkpoint, c.scenario, c.config.name, 5);
    if (four != five) {
      EXPECT_EQ(five, 5) << Key(c);
      ++moved;
    }
  }
  EXPECT_GT(moved, 0);
  EXPECT_LT(moved, static_cast<int>(before.size()) / 2);
}

std::vector<StoredShard> Stored(std::initializer_list<std::tuple<int64_t, int, int>> rows) {
  std::vector<StoredShard> out;
  for (const auto& [id, k, n] : rows) out.push_back({id, k, n, "2026-12-02T06:00:00Z", "m"});
  return out;
}

TEST(FleetVerdict, TheNewestCopyOfAShardCountsAndMissingShardsAreNamed) {
  const ShardChoice whole =
      ChooseShards(Stored({{3, 1, 3}, {4, 2, 3}, {5, 3, 3}, {9, 2, 3}}), 0, "g");
  EXPECT_EQ(whole.count, 3);
  EXPECT_EQ(whole.run_ids, (std::vector<int64_t>{3, 9, 5}));
  EXPECT_TRUE(whole.missing.empty());
  ASSERT_EQ(whole.notes.size(), 1u);
  EXPECT_EQ(whole.notes[0], "Shard 2/3 was stored 2 times (runs 4, 9): the newest, run 9, counts.");

  const ShardChoice partial = ChooseShards(Stored({{7, 3, 4}}), 4, "g");
  EXPECT_EQ(partial.missing, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(MissingShardsText(partial), "1/4, 2/4, 4/4");

  EXPECT_THROW(ChooseShards({}, 0, "g"), std::invalid_argument);
  try {
    ChooseShards(Stored({{1, 1, 2}, {2, 2, 3}}), 0, "g");
    ADD_FAILURE() << "shards of two counts were taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("different shard counts (run 1 is shard 1/2, run 2 is "
                                         "shard 2/3)"),
              std::string::npos)
        << e.what();
  }
  try {
    ChooseShards(Stored({{1, 1, 2}}), 3, "g");
    ADD_FAILURE() << "--expect-shards 3 took a group of 2";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--expect-shards 3, but group 'g' was run as 2 shards"),
              std::string::npos)
        << e.what();
  }
}

// Returns a shard's run on machine `name` holding `configs` of one
// checkpoint and scenario; libm cells carry `libm_fingerprint` and, when
// `libm_token` differs from 7, other outputs.
RunResult ShardRun(const std::string& name, const std::vector<std::string>& configs,
                   const std::string& libm_fingerprint, int libm_token) {
  RunResult run;
  run.machine = {"x86_64", "Some CPU", "Linux", "6.1", "glibc 2.36", {"avx2"}};
  run.machine_name = name;
  for (const std::string& config : configs) {
    const bool libm = config.find("libm") != std::string::npos;
    CellResult c = MakeCell("synthetic:tiny", "classic", config, libm ? libm_token : 7, 4,
                            libm ? "libm" : "portable");
    if (libm) c.math->fingerprint = libm_fingerprint;
    if (config == "reference" || config == "reference-libm") c.config.kernels = "reference";
    run.cells.push_back(c);
  }
  return run;
}

TEST(FleetVerdict, AMachineWhoseLibmCellsDifferIsNamedWithTheCause) {
  const std::vector<RunResult> same = {
      ShardRun("a", {"reference", "cpu-t1-libm"}, "1111222233334444", 7),
      ShardRun("b", {"cpu-t2", "cpu-t2-libm"}, "1111222233334444", 7)};
  std::vector<MachineComparison> machines = CompareShardMachines(same);
  ASSERT_EQ(machines.size(), 1u);
  EXPECT_EQ(machines[0].machine, "b");
  EXPECT_EQ(machines[0].comparison.agree, 2);
  EXPECT_EQ(machines[0].comparison.ExitCode(), 0);

  const std::vector<RunResult> differ = {
      ShardRun("a", {"reference", "cpu-t1-libm"}, "1111222233334444", 7),
      ShardRun("b", {"cpu-t2", "cpu-t2-libm"}, "999922223333444f", 8),
      ShardRun("a", {"cpu-t3"}, "1111222233334444", 7)};
  machines = CompareShardMachines(differ);
  ASSERT_EQ(machines.size(), 1u);
  const RunComparison& c = machines[0].comparison;
  EXPECT_EQ(c.label_a, "machine a");
  EXPECT_EQ(c.label_b, "machine b");
  EXPECT_EQ(c.agree, 1);
  EXPECT_EQ(c.differ, 1);
  bool named = false;
  for (const CellComparison& cell : c.cells) {
    if (cell.outcome != CellOutcome::kDiffer) continue;
    EXPECT_EQ(cell.config, "libm");
    EXPECT_EQ(cell.cause, CompareCause::kMathLibrary);
    named = true;
  }
  EXPECT_TRUE(named);

  // One machine alone has nothing to be compared with.
  EXPECT_TRUE(CompareShardMachines({differ[0], differ[2]}).empty());
  // The union holds every shard's cells once.
  const RunResult all = UnionOfShards(differ, "samebits verdict --group g");
  EXPECT_EQ(all.cells.size(), 5u);
  EXPECT_EQ(all.machine_name, "a");
  EXPECT_EQ(all.command, "samebits verdict --group g");
}

// Machines are compared profile by profile: a machine's int8 cells stand
// for its int8 outputs and are compared with the other machine's int8
// cells, never with its exact ones (which differ by design), whichever a
// shard ran first.
TEST(FleetVerdict, MachinesAreComparedWithinEachQuantDotProfile) {
  const auto int8 = [](RunResult run) {
    for (CellResult& c : run.cells) {
      if (!c.config.name.ends_with("-int8")) continue;
      c.config.quant_dot = "int8";
      for (StepRecord& s : c.steps) s = MakeStep(s.index, 70);
    }
    return run;
  };
  const std::vector<RunResult> shards = {
      int8(ShardRun("a", {"reference", "reference-int8"}, "1111222233334444", 7)),
      int8(ShardRun("b", {"cpu-t2-int8", "cpu-t2"}, "1111222233334444", 7))};
  const std::vector<MachineComparison> machines = CompareShardMachines(shards);
  ASSERT_EQ(machines.size(), 1u);
  const RunComparison& c = machines[0].comparison;
  EXPECT_EQ(c.agree, 2);
  EXPECT_EQ(c.differ, 0);
  std::vector<std::string> configs;
  for (const CellComparison& cell : c.cells) configs.push_back(cell.config);
  std::sort(configs.begin(), configs.end());
  EXPECT_EQ(configs, (std::vector<std::string>{"portable", "portable-int8"}));
}

// Returns the reference group `key` holding the steps of `cell`.
ReferenceGroup GroupOf(const std::string& key, const CellResult& cell) {
  ReferenceGroup g;
  g.key = key;
  g.math = *cell.math;
  for (const StepRecord& s : cell.steps) {
    g.lines.push_back({cell.checkpoint, cell.scenario, s.index, s.kind, s.position, s.token,
                       s.fnv1a64, s.xxh3_64});
  }
  return g;
}

// A fleet of two architectures whose libm results differ (as glibc's tanhf
// does between x86-64 and aarch64): each shard's libm cells are judged
// against their own architecture's references and agree only among
// themselves; the portable cells of both must still agree with each other.
TEST(FleetVerdict, EachShardsLibmCellsAreJudgedAgainstItsOwnArchitecture) {
  RunResult x86 = ShardRun("a", {"reference", "reference-libm", "cpu-t1-libm"}, "1111", 7);
  RunResult arm = ShardRun("b", {"cpu-t2", "cpu-t2-libm"}, "2222", 8);
  arm.machine.arch = "aarch64";
  const CellResult& base = x86.cells[0];
  JudgeOptions options;
  options.references["portable"] = GroupOf("portable", base);
  options.references["libm-x86_64"] = GroupOf("libm-x86_64", x86.cells[1]);
  options.references["libm-aarch64"] = GroupOf("libm-aarch64", arm.cells[1]);

  RunResult all = UnionOfShards({x86, arm}, "samebits verdict --group g");
  EXPECT_EQ(all.cells[3].machine_arch, "aarch64");
  EXPECT_EQ(all.cells[0].machine_arch, "");
  EXPECT_EQ(NeededReferenceKeys(all),
            (std::vector<std::string>{"libm-aarch64", "libm-x86_64", "portable"}));
  Judge(all, options);
  EXPECT_EQ(all.diagnosis.kind, Diagnosis::Kind::kAllAgree) << all.diagnosis.headline;
  for (const CellResult& c : all.cells) EXPECT_EQ(c.code, ResultCode::kPass) << c.config.name;

  // Judged as one machine (the old union), the aarch64 libm cell disagreed
  // with the x86-64 ones: the control that the test can fail.
  RunResult one_machine = all;
  for (CellResult& c : one_machine.cells) c.machine_arch.clear();
  Judge(one_machine, options);
  EXPECT_NE(one_machine.diagnosis.kind, Diagnosis::Kind::kAllAgree);

  // A portable cell that differs on aarch64 still fails: the portable
  // profile promises the same bits everywhere.
  arm.cells[0] = MakeCell("synthetic:tiny", "classic", "cpu-t2", 9, 4);
  RunResult broken = UnionOfShards({x86, arm}, "samebits verdict --group g");
  Judge(broken, options);
  EXPECT_EQ(broken.cells[3].code, ResultCode::kFail);
}

}  // namespace
}  // namespace samebits::harness
