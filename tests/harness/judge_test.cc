// The gate's diagnosis (harness/analysis/judge.h) on synthetic runs.
#include "harness/analysis/judge.h"

#include <gtest/gtest.h>

#include "harness/analysis/compare.h"
#include "harness/analysis/reference_generation.h"
#include "harness/analysis/verdict.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::harness {
namespace {

using testing::MakeCell;

// A run of two scenarios x three configurations that all agree (seeds per
// scenario), on x86_64.
RunResult AgreeingRun() {
  RunResult run;
  run.machine.arch = "x86_64";
  for (const char* scenario : {"classic", "long"}) {
    const uint64_t seed = std::string(scenario) == "classic" ? 7 : 8;
    for (const char* config : {"reference", "cpu-t1", "cpu-t3"}) {
      run.cells.push_back(MakeCell("synthetic:tiny", scenario, config, seed));
    }
  }
  return run;
}

// Returns the reference group the agreeing run matches.
ReferenceGroup MatchingReferences(const RunResult& run) {
  ReferenceGroup g;
  g.key = "portable";
  g.math = *run.cells[0].math;
  g.revision = "1111111111111111111111111111111111111111";
  for (const CellResult& c : run.cells) {
    if (c.config.name != "reference") continue;
    for (const StepRecord& s : c.steps) {
      g.lines.push_back(
          {c.checkpoint, c.scenario, s.index, s.kind, s.position, s.token, s.fnv1a64, s.xxh3_64});
    }
  }
  return g;
}

JudgeOptions WithReferences(const ReferenceGroup& g) {
  JudgeOptions o;
  o.references[g.key] = g;
  return o;
}

std::string AllText(const Diagnosis& d) {
  std::string text = d.headline + "\n";
  for (const std::string& line : d.details) text += line + "\n";
  return text;
}

TEST(Judge, EverythingAgreesPasses) {
  RunResult run = AgreeingRun();
  Judge(run, WithReferences(MatchingReferences(run)));
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kAllAgree) << AllText(run.diagnosis);
  EXPECT_TRUE(GatePasses(run));
  for (const CellResult& c : run.cells) EXPECT_EQ(c.code, ResultCode::kPass);
}

// Sampling at a temperature above 0 that is frozen, or whose seed does not
// reproduce its sample, fails its cell though every step agrees; seeds that
// drew fewer distinct samples than there were seeds, each reproduced, pass.
TEST(Judge, ASamplingDefectFailsItsCellWhateverItsStepsMatch) {
  RunResult run = AgreeingRun();
  run.cells[0].sampling = SamplingInfo{4, 1.0, 16, 1, 0};  // frozen
  run.cells[1].sampling = SamplingInfo{4, 0.5, 16, 4, 3};  // seed 3 unstable
  run.cells[2].sampling = SamplingInfo{4, 1.0, 16, 3, 0};  // two seeds alike: fine
  Judge(run, WithReferences(MatchingReferences(run)));
  EXPECT_FALSE(GatePasses(run));
  EXPECT_EQ(run.cells[0].code, ResultCode::kFail);
  EXPECT_EQ(run.cells[0].message,
            "4 seeds gave one sample at temperature 1 (16 tokens each): sampling is frozen, "
            "different seeds must give different samples");
  EXPECT_EQ(run.cells[1].code, ResultCode::kFail);
  EXPECT_EQ(run.cells[1].message,
            "seed 3 of 4 gave two different samples at temperature 0.5: the same seed must give "
            "the same sample");
  EXPECT_EQ(run.cells[2].code, ResultCode::kPass) << run.cells[2].message;
  EXPECT_NE(AllText(run.diagnosis).find("2 cells sampled at a temperature above 0"),
            std::string::npos)
      << AllText(run.diagnosis);
}

TEST(Judge, DisagreeingConfigurationsBreakIdentityAndNameTheFirstDivergence) {
  RunResult run = AgreeingRun();
  const ReferenceGroup refs = MatchingReferences(run);
  // cpu-t3 of `long` goes wrong at step 2.
  run.cells[5].steps[2].xxh3_64 ^= 1;
  run.cells[5].steps[3].token += 1;
  Judge(run, WithReferences(refs));
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kIdentityBroken);
  EXPECT_FALSE(GatePasses(run));
  EXPECT_EQ(run.cells[5].code, ResultCode::kFail);
  EXPECT_EQ(run.cells[4].code, ResultCode::kPass);
  EXPECT_EQ(run.cells[2].code, ResultCode::kPass);
  ASSERT_FALSE(run.diagnosis.divergences.empty());
  const Divergence& d = run.diagnosis.divergences[0];
  EXPECT_EQ(d.scenario, "long");
  EXPECT_EQ(d.config_a, "reference");
  EXPECT_EQ(d.config_b, "cpu-t3");
  EXPECT_EQ(d.step_index, 2);
  EXPECT_EQ(d.kind, "decode");
  EXPECT_EQ(d.position, 12);
  const std::string text = AllText(run.diagnosis);
  EXPECT_NE(text.find("cpu-t3"), std::string::npos) << text;
  EXPECT_NE(text.find("step 2 (decode, position 12)"), std::string::npos) << text;
  EXPECT_NE(text.find("--trace"), std::string::npos) << text;
  // A commit can break the identity too: the gate says how to find it.
  EXPECT_NE(text.find("Find the commit that broke it: build/bin/samebits bisect"),
            std::string::npos)
      << text;
}

TEST(Judge, TracesNameTheFirstDivergingLayerAndOp) {
  RunResult run = AgreeingRun();
  run.cells[2].steps[1].xxh3_64 ^= 1;
  JudgeOptions options = WithReferences(MatchingReferences(AgreeingRun()));
  options.traced = true;
  std::vector<TraceRecord> a = {
      {10, -1, "embed", 1}, {10, 0, "attn_norm", 2}, {10, 0, "ffn_out", 3}};
  std::vector<TraceRecord> b = a;
  b[2].xxh3_64 = 4;
  const auto diff = FirstTraceDifference(a, b);
  ASSERT_TRUE(diff.has_value());
  EXPECT_EQ(diff->layer, 0);
  EXPECT_EQ(diff->op, "ffn_out");
  options.trace_differences[TraceKey("synthetic:tiny", "classic", "reference", "cpu-t3")] = *diff;
  Judge(run, options);
  ASSERT_EQ(run.diagnosis.kind, Diagnosis::Kind::kIdentityBroken);
  ASSERT_TRUE(run.diagnosis.divergences[0].layer.has_value());
  EXPECT_EQ(*run.diagnosis.divergences[0].layer, 0);
  EXPECT_EQ(run.diagnosis.divergences[0].op, "ffn_out");
  EXPECT_NE(AllText(run.diagnosis).find("layer 0, op ffn_out"), std::string::npos);
  EXPECT_EQ(AllText(run.diagnosis).find("Rerun the gate with --trace"), std::string::npos);
}

TEST(Judge, TheMajorityStandsWhenTheReferenceKernelsDidNotRun) {
  RunResult run = AgreeingRun();
  run.cells[0].code = ResultCode::kUnresolved;  // reference crashed
  run.cells[1].steps[0].xxh3_64 ^= 1;           // cpu-t1 differs from cpu-t3... a tie
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "cpu-t2", 7));  // now 2 against 1
  Judge(run, JudgeOptions{});
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kIdentityBroken);
  EXPECT_EQ(run.cells[1].code, ResultCode::kFail);
  EXPECT_EQ(run.cells[2].code, ResultCode::kPass);
}

// Returns the agreeing run in the libm profile.
RunResult AgreeingLibmRun() {
  RunResult run = AgreeingRun();
  for (CellResult& c : run.cells) {
    c.config.math = "libm";
    c.math->profile = "libm";
  }
  return run;
}

ReferenceGroup MatchingLibmReferences(const RunResult& run) {
  ReferenceGroup refs = MatchingReferences(run);
  refs.key = "libm-x86_64";
  return refs;
}

TEST(Judge, AllAgreeButAnotherMathLibraryRoundsDifferently) {
  RunResult run = AgreeingLibmRun();
  ReferenceGroup refs = MatchingLibmReferences(run);
  refs.math.name = "musl";
  refs.math.version = "1.2.4";
  refs.math.fingerprint = "00000000000000cc";
  refs.lines[1].xxh3_64 ^= 1;
  Judge(run, WithReferences(refs));
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kMathLibraryDiffers);
  EXPECT_FALSE(GatePasses(run));
  const std::string text = AllText(run.diagnosis);
  EXPECT_NE(text.find("rounds differently"), std::string::npos) << text;
  EXPECT_NE(text.find("samebits-portable 1 (fingerprint 00000000000000aa)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("musl 1.2.4 (fingerprint 00000000000000cc)"), std::string::npos) << text;
  for (const CellResult& c : run.cells) {
    if (c.scenario == "classic") {
      EXPECT_EQ(c.code, ResultCode::kFail);
    }
  }
}

// A run in which every cell was UNSUPPORTED checked nothing: it must not
// pass, and the headline must not claim that anything agrees.
TEST(Judge, NothingCheckedDoesNotPass) {
  RunResult run = AgreeingRun();
  for (CellResult& c : run.cells) {
    c.code = ResultCode::kUnsupported;
    c.steps.clear();
  }
  Judge(run, JudgeOptions{});
  EXPECT_EQ(CountPassing(run), 0);
  EXPECT_FALSE(GatePasses(run));
  EXPECT_NE(run.diagnosis.headline.find("Nothing was checked"), std::string::npos)
      << AllText(run.diagnosis);
}

// Without a reference group the gate cannot claim agreement with one.
TEST(Judge, NoReferenceDoesNotPass) {
  RunResult run = AgreeingRun();
  Judge(run, JudgeOptions{});
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kNoReference) << AllText(run.diagnosis);
  EXPECT_FALSE(GatePasses(run));
}

TEST(Judge, AllAgreeWithTheSameLibraryMeansTheCodeChangedAndSaysHowToBisect) {
  RunResult run = AgreeingRun();
  ReferenceGroup refs = MatchingReferences(run);
  refs.lines[2].token += 1;
  refs.lines[2].xxh3_64 ^= 0xff;
  JudgeOptions options = WithReferences(refs);
  options.samebits = "build/bin/samebits";
  Judge(run, options);
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kCodeChanged);
  const std::string text = AllText(run.diagnosis);
  EXPECT_NE(text.find("the code changed the numbers"), std::string::npos) << text;
  EXPECT_NE(text.find("the references were generated at 1111111111111111111111111111111111111111"),
            std::string::npos)
      << text;
  // Without the user's flags, the plain command; bisect takes its good
  // revision from the same references.
  EXPECT_NE(text.find("  build/bin/samebits bisect\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("git bisect"), std::string::npos) << text;
  options.bisect_command = "build/bin/samebits bisect --db /tmp/x.db";
  Judge(run, options);
  EXPECT_NE(AllText(run.diagnosis).find("build/bin/samebits bisect --db /tmp/x.db"),
            std::string::npos);
  EXPECT_NE(text.find("step 2"), std::string::npos) << text;
}

TEST(Judge, NoReferenceGroupSaysHowToMakeOne) {
  RunResult run = AgreeingRun();
  Judge(run, JudgeOptions{});
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kNoReference);
  EXPECT_FALSE(GatePasses(run));
  const std::string text = AllText(run.diagnosis);
  EXPECT_NE(text.find("references/portable.txt does not exist"), std::string::npos) << text;
  EXPECT_NE(text.find("samebits reference generate"), std::string::npos) << text;
  for (const CellResult& c : run.cells) EXPECT_EQ(c.code, ResultCode::kPass);
}

TEST(Judge, ALibmGroupIsKeyedByArchitecture) {
  RunResult run;
  run.machine.arch = "aarch64";
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "reference-libm", 3, 4, "libm"));
  EXPECT_EQ(NeededReferenceKeys(run), std::vector<std::string>{"libm-aarch64"});
  Judge(run, JudgeOptions{});
  EXPECT_NE(AllText(run.diagnosis).find("references/libm-aarch64.txt"), std::string::npos);
  EXPECT_NE(AllText(run.diagnosis).find("reference generate --math libm"), std::string::npos);
}

TEST(Judge, ProfilesAreComparedOnlyWithinThemselves) {
  RunResult run = AgreeingRun();
  ReferenceGroup portable = MatchingReferences(run);
  // The libm cells differ from the portable ones, as they may.
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "reference-libm", 99, 4, "libm"));
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "cpu-t1-libm", 99, 4, "libm"));
  ReferenceGroup libm;
  libm.key = "libm-x86_64";
  libm.math = *run.cells.back().math;
  for (const StepRecord& s : run.cells.back().steps) {
    libm.lines.push_back(
        {"synthetic:tiny", "classic", s.index, s.kind, s.position, s.token, s.fnv1a64, s.xxh3_64});
  }
  JudgeOptions options = WithReferences(portable);
  options.references[libm.key] = libm;
  Judge(run, options);
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kAllAgree) << AllText(run.diagnosis);
}

// Returns `cell` as its twin under --quant-dot int8, its outputs from `seed`.
CellResult Int8Twin(CellResult cell, uint64_t seed) {
  cell.config.name += "-int8";
  cell.config.quant_dot = "int8";
  for (StepRecord& s : cell.steps) s = testing::MakeStep(s.index, seed);
  return cell;
}

// Returns the reference group `key` of the reference cells among `cells`.
ReferenceGroup GroupOf(const std::string& key, const std::vector<CellResult>& cells) {
  ReferenceGroup g;
  g.key = key;
  g.math = *cells.front().math;
  for (const CellResult& c : cells) {
    if (c.config.kernels != "reference") continue;
    for (const StepRecord& s : c.steps) {
      g.lines.push_back(
          {c.checkpoint, c.scenario, s.index, s.kind, s.position, s.token, s.fnv1a64, s.xxh3_64});
    }
  }
  return g;
}

// An int8 cell differs from its exact twin by design: it is compared only
// with the int8 cells of its pair and with the int8 references, never with
// an exact cell, so the gate passes; its own group still finds an int8 cell
// that differs from the int8 baseline.
TEST(Judge, Int8CellsAreNeverComparedWithExactOnes) {
  RunResult run = AgreeingRun();
  const ReferenceGroup portable = MatchingReferences(run);
  std::vector<CellResult> int8;
  for (const CellResult& c : run.cells)
    int8.push_back(Int8Twin(c, c.scenario == "classic" ? 70 : 80));
  run.cells.insert(run.cells.end(), int8.begin(), int8.end());
  ASSERT_NE(run.cells[0].steps[0].xxh3_64, run.cells[6].steps[0].xxh3_64);
  EXPECT_EQ(NeededReferenceKeys(run), (std::vector<std::string>{"portable", "portable-int8"}));
  const std::vector<AgreementGroup> groups = GroupCells(run);
  ASSERT_EQ(groups.size(), 4u);
  for (const AgreementGroup& g : groups) {
    EXPECT_EQ(g.classes.size(), 1u);
    for (size_t i : g.cells) EXPECT_EQ(run.cells[i].config.quant_dot, g.quant_dot);
  }
  JudgeOptions options = WithReferences(portable);
  const ReferenceGroup portable_int8 = GroupOf("portable-int8", int8);
  options.references[portable_int8.key] = portable_int8;
  Judge(run, options);
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kAllAgree) << AllText(run.diagnosis);
  for (const CellResult& c : run.cells) EXPECT_EQ(c.code, ResultCode::kPass) << c.config.name;

  // Within the int8 profile, a differing cell is still an identity break,
  // judged against the int8 baseline.
  run.cells[11].steps[1].xxh3_64 ^= 1;  // cpu-t3-int8 of `long`
  Judge(run, options);
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kIdentityBroken) << AllText(run.diagnosis);
  EXPECT_EQ(run.cells[11].code, ResultCode::kFail);
  ASSERT_EQ(run.diagnosis.divergences.size(), 1u);
  EXPECT_EQ(run.diagnosis.divergences[0].config_a, "reference-int8");
  EXPECT_EQ(run.diagnosis.divergences[0].config_b, "cpu-t3-int8");
  for (size_t i = 0; i < 11; ++i) EXPECT_EQ(run.cells[i].code, ResultCode::kPass) << i;

  // Judged against the exact references instead, every int8 cell would
  // differ: the int8 group is keyed apart, and without it there is none.
  run.cells[11].steps[1].xxh3_64 ^= 1;
  Judge(run, WithReferences(portable));
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kNoReference) << AllText(run.diagnosis);
  const std::string text = AllText(run.diagnosis);
  EXPECT_NE(text.find("references/portable-int8.txt does not exist"), std::string::npos) << text;
  EXPECT_NE(text.find("reference generate --quant-dot int8  (writes"), std::string::npos) << text;
  for (const CellResult& c : run.cells) EXPECT_EQ(c.code, ResultCode::kPass) << c.config.name;
}

// `reference generate --quant-dot exact,int8` writes each profile's outputs
// to its own group, the int8 one keyed portable-int8 on every architecture.
TEST(Judge, Int8ReferencesAreAGroupOfTheirOwn) {
  RunResult run = AgreeingRun();
  run.machine.arch = "s390x";
  std::vector<CellResult> int8;
  for (const CellResult& c : run.cells)
    int8.push_back(Int8Twin(c, c.scenario == "classic" ? 70 : 80));
  run.cells.insert(run.cells.end(), int8.begin(), int8.end());
  EXPECT_EQ(WhyNotAReference(run), "");
  const std::map<std::string, ReferenceGroup> groups = ReferenceGroupsFromRun(run);
  ASSERT_EQ(groups.size(), 2u);
  const ReferenceGroup& exact = groups.at("portable");
  const ReferenceGroup& dot = groups.at("portable-int8");
  EXPECT_EQ(exact.quant_dot, "exact");
  EXPECT_EQ(dot.quant_dot, "int8");
  ReferenceGroup want_exact = MatchingReferences(run);
  want_exact.revision = exact.revision;
  EXPECT_EQ(FormatReferenceGroup(exact), FormatReferenceGroup(want_exact));
  ReferenceGroup want = GroupOf("portable-int8", int8);
  want.revision = exact.revision;
  EXPECT_EQ(FormatReferenceGroup(dot), FormatReferenceGroup(want));
}

// The libm profile's int8 group is keyed by architecture, its profile first.
TEST(Judge, ALibmInt8GroupIsKeyedByArchitecture) {
  RunResult run;
  run.machine.arch = "aarch64";
  run.cells.push_back(
      Int8Twin(MakeCell("synthetic:tiny-q4_0", "classic", "reference-libm", 3, 4, "libm"), 4));
  EXPECT_EQ(NeededReferenceKeys(run), std::vector<std::string>{"libm-int8-aarch64"});
  Judge(run, JudgeOptions{});
  const std::string text = AllText(run.diagnosis);
  EXPECT_NE(text.find("references/libm-int8-aarch64.txt"), std::string::npos) << text;
  EXPECT_NE(text.find("reference generate --math libm --quant-dot int8"), std::string::npos)
      << text;
}

TEST(Judge, ChildFailuresFailTheGateAndAreListed) {
  RunResult run = AgreeingRun();
  run.cells[4].code = ResultCode::kTimeout;
  run.cells[4].message = "killed after the 60 s timeout";
  Judge(run, WithReferences(MatchingReferences(AgreeingRun())));
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kChildFailures);
  EXPECT_FALSE(GatePasses(run));
  EXPECT_NE(AllText(run.diagnosis).find("TIMEOUT: synthetic:tiny long cpu-t1"), std::string::npos);
}

TEST(Judge, UnsupportedCellsDoNotFailTheGate) {
  RunResult run = AgreeingRun();
  CellResult neon = MakeCell("synthetic:tiny", "classic", "cpu-neon", 0, 0);
  neon.code = ResultCode::kUnsupported;
  run.cells.push_back(neon);
  Judge(run, WithReferences(MatchingReferences(AgreeingRun())));
  EXPECT_TRUE(GatePasses(run)) << AllText(run.diagnosis);
}

TEST(Judge, IsIdempotent) {
  RunResult run = AgreeingRun();
  run.cells[5].steps[2].xxh3_64 ^= 1;
  const JudgeOptions options = WithReferences(MatchingReferences(AgreeingRun()));
  Judge(run, options);
  const std::string first = AllText(run.diagnosis);
  Judge(run, options);
  EXPECT_EQ(AllText(run.diagnosis), first);
  EXPECT_EQ(run.cells[5].code, ResultCode::kFail);
}

TEST(Compare, StepDifferencesSayWhat) {
  std::vector<StepRecord> a = {testing::MakeStep(0, 1), testing::MakeStep(1, 1)};
  std::vector<StepRecord> b = a;
  EXPECT_FALSE(FirstStepDifference(a, b).has_value());
  b[1].xxh3_64 = 0xabc;
  auto d = FirstStepDifference(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->index, 1);
  EXPECT_NE(d->detail.find("0000000000000abc"), std::string::npos) << d->detail;
  b = a;
  b.pop_back();
  d = FirstStepDifference(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->index, 1);
  EXPECT_EQ(d->detail, "2 steps vs 1");
  b = a;
  b[0].fnv1a64 ^= 1;  // one hash alone differing is a difference too
  EXPECT_TRUE(FirstStepDifference(a, b).has_value());
}

}  // namespace

namespace {

// The portable profile's math is the project's own code: a portable
// fingerprint that differs from the reference's, with different hashes, is
// a code change (with the bisect command), never "the math library rounds
// differently".
TEST(Judge, APortableFingerprintChangeIsACodeChange) {
  RunResult run = AgreeingRun();
  ReferenceGroup refs = MatchingReferences(run);
  refs.math.fingerprint = "00000000000000cc";
  refs.lines[1].xxh3_64 ^= 1;
  Judge(run, WithReferences(refs));
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kCodeChanged) << AllText(run.diagnosis);
  const std::string text = AllText(run.diagnosis);
  EXPECT_EQ(text.find("rounds differently"), std::string::npos) << text;
  EXPECT_NE(text.find("portable math's fingerprint changed"), std::string::npos) << text;
  EXPECT_NE(text.find("samebits bisect"), std::string::npos) << text;
}

// Both at once: the libm group's library differs and the portable group
// shows a code change. The code change leads; the library follows as "Also".
TEST(Judge, ACodeChangeLeadsAMathLibraryDifference) {
  RunResult run = AgreeingRun();
  const ReferenceGroup portable = MatchingReferences(run);
  RunResult libm_run = AgreeingLibmRun();
  ReferenceGroup libm = MatchingLibmReferences(libm_run);
  run.cells.insert(run.cells.end(), libm_run.cells.begin(), libm_run.cells.end());
  JudgeOptions options;
  options.references[portable.key] = portable;
  options.references[libm.key] = libm;
  options.references[portable.key].lines[0].xxh3_64 ^= 1;
  options.references[libm.key].math.fingerprint = "00000000000000cc";
  options.references[libm.key].lines[0].xxh3_64 ^= 1;
  Judge(run, options);
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kCodeChanged) << AllText(run.diagnosis);
  EXPECT_NE(run.diagnosis.headline.find("the code changed the numbers"), std::string::npos);
  const std::string text = AllText(run.diagnosis);
  EXPECT_NE(text.find("Also: All configurations agree with each other but not with "
                      "references/libm-x86_64.txt: this environment's math library rounds "
                      "differently."),
            std::string::npos)
      << text;

  // Negative control: without the code change, the math library leads.
  RunResult again = AgreeingRun();
  again.cells.insert(again.cells.end(), libm_run.cells.begin(), libm_run.cells.end());
  options.references[portable.key] = portable;
  Judge(again, options);
  EXPECT_EQ(again.diagnosis.kind, Diagnosis::Kind::kMathLibraryDiffers) << AllText(again.diagnosis);
}

// Returns `cell` as the batched configuration `name` (batch `n`,
// `schedule`), every step in slot 1 of n sequences.
CellResult AsBatched(CellResult cell, const std::string& name, int n, const std::string& schedule) {
  cell.config.name = name;
  cell.config.batch = n;
  cell.config.batch_schedule = schedule;
  for (StepRecord& s : cell.steps) s.batch = BatchPlace{n, n + 2, 1, s.index % (n + 2)};
  return cell;
}

// The unbatched configurations agree; a batched one differs: batch variance,
// named with its batch and where the sequence sat.
TEST(Judge, OnlyBatchedDifferencesAreBatchVariance) {
  RunResult run = AgreeingRun();
  const ReferenceGroup refs = MatchingReferences(run);
  run.cells.push_back(AsBatched(run.cells[1], "cpu-t1-b4", 4, "together"));
  run.cells.push_back(AsBatched(run.cells[2], "cpu-t3-b8-staggered", 8, "staggered"));
  run.cells.back().steps[2].xxh3_64 ^= 1;
  Judge(run, WithReferences(refs));
  const std::string text = AllText(run.diagnosis);
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kBatchVariance) << text;
  EXPECT_FALSE(GatePasses(run));
  EXPECT_NE(text.find("The cpu pass is not batch-invariant: rows of other sequences change this "
                      "sequence's numbers"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("step 2 (decode, position 12) \u2014 batch 8 staggered, slot 1 of 8 "
                      "sequences, row 2 of 10"),
            std::string::npos)
      << text;
  EXPECT_EQ(run.cells.back().code, ResultCode::kFail);
  EXPECT_NE(run.cells.back().message.find("batch 8 staggered, slot 1 of 8 sequences"),
            std::string::npos)
      << run.cells.back().message;
  EXPECT_EQ(run.cells[run.cells.size() - 2].code, ResultCode::kPass);
  ASSERT_EQ(run.diagnosis.divergences.size(), 1u);
  EXPECT_EQ(run.diagnosis.divergences[0].batch_place,
            "batch 8 staggered, slot 1 of 8 sequences, row 2 of 10");
}

// Negative control: when an unbatched configuration differs as well, the
// identity is broken, and it leads.
TEST(Judge, AnUnbatchedDifferenceIsAnIdentityBreakNotBatchVariance) {
  RunResult run = AgreeingRun();
  const ReferenceGroup refs = MatchingReferences(run);
  run.cells.push_back(AsBatched(run.cells[1], "cpu-t1-b4", 4, "together"));
  run.cells.back().steps[1].xxh3_64 ^= 1;
  run.cells[2].steps[3].xxh3_64 ^= 1;  // cpu-t3 of classic, unbatched
  Judge(run, WithReferences(refs));
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kIdentityBroken) << AllText(run.diagnosis);
}

// However many batched configurations agree with each other, batch 1 is
// the baseline they are judged against.
TEST(Judge, BatchedConfigurationsAreJudgedAgainstBatchOne) {
  RunResult run;
  run.machine.arch = "x86_64";
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "cpu-t1", 7));
  for (const char* name : {"cpu-t1-b4", "cpu-t1-b8", "cpu-t1-b16"}) {
    run.cells.push_back(
        AsBatched(MakeCell("synthetic:tiny", "classic", "cpu-t1", 9), name, 4, "together"));
  }
  Judge(run, JudgeOptions{});
  EXPECT_EQ(run.diagnosis.kind, Diagnosis::Kind::kBatchVariance) << AllText(run.diagnosis);
  EXPECT_EQ(run.cells[0].code, ResultCode::kPass);
  for (size_t i = 1; i < run.cells.size(); ++i) EXPECT_EQ(run.cells[i].code, ResultCode::kFail);
}

}  // namespace
}  // namespace samebits::harness
