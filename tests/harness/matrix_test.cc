// Matrix expansion and selection (harness/runner/matrix.h).
#include "harness/runner/matrix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "engine/kernels/kernels.h"
#include "engine/model/tuning.h"
#include "engine/run/batch_companions.h"
#include "engine/threads/thread_pool.h"
#include "tests/harness/own_profile.h"

namespace samebits::runner {
namespace {

using harness::testing::OwnProfile;

MatrixOptions TwoScenarios() {
  MatrixOptions o;
  o.profile = OwnProfile();
  o.scenario_files = {"/s/classic.json", "/s/long.json"};
  return o;
}

// A configuration as one line, every field the engine is given: the oracle
// below is written in this form.
std::string Describe(const harness::Configuration& c) {
  return c.name + " " + c.kernels + " " + std::to_string(c.threads) + " " + c.isa + " " +
         std::to_string(c.gemv_chunk_bytes) + " " + c.math + " " + std::to_string(c.batch) + " " +
         std::to_string(c.batch_seed) + " " + c.batch_schedule;
}

std::vector<std::string> Described(const std::vector<harness::Configuration>& configs) {
  std::vector<std::string> out;
  out.reserve(configs.size());
  for (const harness::Configuration& c : configs) out.push_back(Describe(c));
  return out;
}

// The default configurations as the code wrote them before they moved to
// engines/samebits.json, under --math portable, for the thread counts and
// small chunk of each case: name, kernels, threads, isa, GEMV chunk, math,
// batch, batch seed, batch schedule. Since then the profile alone added
// cpu-tMAX-tm3-tn5-rows2 (the tuning knobs' odd work units, issue 44),
// whose knobs are no field of Configuration: its name carries them.
struct OracleCase {
  std::vector<int> threads;
  int64_t small_chunk_bytes;
  std::vector<std::string> portable;
};

const std::vector<OracleCase>& Oracle() {
  static const std::vector<OracleCase> kCases = {
      {{1, 2, 3},
       8192,
       {"reference reference 1 auto 0 portable 1 1 together",
        "cpu-t1 cpu 1 auto 0 portable 1 1 together", "cpu-t2 cpu 2 auto 0 portable 1 1 together",
        "cpu-t3 cpu 3 auto 0 portable 1 1 together",
        "cpu-t3-chunk8k cpu 3 auto 8192 portable 1 1 together",
        "cpu-t3-tm3-tn5-rows2 cpu 3 auto 0 portable 1 1 together",
        "cpu-scalar cpu 1 scalar 0 portable 1 1 together",
        "cpu-avx2 cpu 1 avx2 0 portable 1 1 together",
        "cpu-avx512 cpu 1 avx512 0 portable 1 1 together",
        "cpu-neon cpu 1 neon 0 portable 1 1 together",
        "cpu-t2-b4 cpu 2 auto 0 portable 4 1 together",
        "cpu-t3-b8-staggered cpu 3 auto 0 portable 8 1 staggered"}},
      {{1, 2, 3},
       1000,
       {"reference reference 1 auto 0 portable 1 1 together",
        "cpu-t1 cpu 1 auto 0 portable 1 1 together", "cpu-t2 cpu 2 auto 0 portable 1 1 together",
        "cpu-t3 cpu 3 auto 0 portable 1 1 together",
        "cpu-t3-chunk1000 cpu 3 auto 1000 portable 1 1 together",
        "cpu-t3-tm3-tn5-rows2 cpu 3 auto 0 portable 1 1 together",
        "cpu-scalar cpu 1 scalar 0 portable 1 1 together",
        "cpu-avx2 cpu 1 avx2 0 portable 1 1 together",
        "cpu-avx512 cpu 1 avx512 0 portable 1 1 together",
        "cpu-neon cpu 1 neon 0 portable 1 1 together",
        "cpu-t2-b4 cpu 2 auto 0 portable 4 1 together",
        "cpu-t3-b8-staggered cpu 3 auto 0 portable 8 1 staggered"}},
      {{4},
       8192,
       {"reference reference 1 auto 0 portable 1 1 together",
        "cpu-t4 cpu 4 auto 0 portable 1 1 together",
        "cpu-t4-chunk8k cpu 4 auto 8192 portable 1 1 together",
        "cpu-t4-tm3-tn5-rows2 cpu 4 auto 0 portable 1 1 together",
        "cpu-scalar cpu 1 scalar 0 portable 1 1 together",
        "cpu-avx2 cpu 1 avx2 0 portable 1 1 together",
        "cpu-avx512 cpu 1 avx512 0 portable 1 1 together",
        "cpu-neon cpu 1 neon 0 portable 1 1 together",
        "cpu-t4-b4 cpu 4 auto 0 portable 4 1 together",
        "cpu-t4-b8-staggered cpu 4 auto 0 portable 8 1 staggered"}},
      {{4},
       1000,
       {"reference reference 1 auto 0 portable 1 1 together",
        "cpu-t4 cpu 4 auto 0 portable 1 1 together",
        "cpu-t4-chunk1000 cpu 4 auto 1000 portable 1 1 together",
        "cpu-t4-tm3-tn5-rows2 cpu 4 auto 0 portable 1 1 together",
        "cpu-scalar cpu 1 scalar 0 portable 1 1 together",
        "cpu-avx2 cpu 1 avx2 0 portable 1 1 together",
        "cpu-avx512 cpu 1 avx512 0 portable 1 1 together",
        "cpu-neon cpu 1 neon 0 portable 1 1 together",
        "cpu-t4-b4 cpu 4 auto 0 portable 4 1 together",
        "cpu-t4-b8-staggered cpu 4 auto 0 portable 8 1 staggered"}},
      // Repeats are kept, in the order given; the batch of 4 takes the
      // second smallest distinct count, the largest the rest.
      {{2, 2, 1},
       8192,
       {"reference reference 1 auto 0 portable 1 1 together",
        "cpu-t2 cpu 2 auto 0 portable 1 1 together", "cpu-t2 cpu 2 auto 0 portable 1 1 together",
        "cpu-t1 cpu 1 auto 0 portable 1 1 together",
        "cpu-t2-chunk8k cpu 2 auto 8192 portable 1 1 together",
        "cpu-t2-tm3-tn5-rows2 cpu 2 auto 0 portable 1 1 together",
        "cpu-scalar cpu 1 scalar 0 portable 1 1 together",
        "cpu-avx2 cpu 1 avx2 0 portable 1 1 together",
        "cpu-avx512 cpu 1 avx512 0 portable 1 1 together",
        "cpu-neon cpu 1 neon 0 portable 1 1 together",
        "cpu-t2-b4 cpu 2 auto 0 portable 4 1 together",
        "cpu-t2-b8-staggered cpu 2 auto 0 portable 8 1 staggered"}},
      {{2, 2, 1},
       1000,
       {"reference reference 1 auto 0 portable 1 1 together",
        "cpu-t2 cpu 2 auto 0 portable 1 1 together", "cpu-t2 cpu 2 auto 0 portable 1 1 together",
        "cpu-t1 cpu 1 auto 0 portable 1 1 together",
        "cpu-t2-chunk1000 cpu 2 auto 1000 portable 1 1 together",
        "cpu-t2-tm3-tn5-rows2 cpu 2 auto 0 portable 1 1 together",
        "cpu-scalar cpu 1 scalar 0 portable 1 1 together",
        "cpu-avx2 cpu 1 avx2 0 portable 1 1 together",
        "cpu-avx512 cpu 1 avx512 0 portable 1 1 together",
        "cpu-neon cpu 1 neon 0 portable 1 1 together",
        "cpu-t2-b4 cpu 2 auto 0 portable 4 1 together",
        "cpu-t2-b8-staggered cpu 2 auto 0 portable 8 1 staggered"}},
  };
  return kCases;
}

// Returns `portable` (described lines) as the twins under `math`: the
// name suffixed and the math field set, as the code did for any profile
// but portable (pinned by LibmTwinsAreSpelledOut below).
std::vector<std::string> UnderMath(const std::vector<std::string>& portable,
                                   const std::string& math) {
  std::vector<std::string> out;
  for (const std::string& line : portable) {
    const size_t name_end = line.find(' ');
    std::string twin =
        math == "portable" ? line.substr(0, name_end) : line.substr(0, name_end) + "-" + math;
    twin += line.substr(name_end);
    twin.replace(twin.find(" portable "), 10, " " + math + " ");
    out.push_back(twin);
  }
  return out;
}

// The proof: the profile's templates give exactly the list the code
// gave, field by field and in order, for every combination of the inputs.
TEST(Matrix, TheProfileGivesTheDefaultConfigurationsTheCodeGave) {
  const std::vector<std::vector<std::string>> maths = {
      {"portable"}, {"portable", "libm"}, {"libm"}};
  for (const OracleCase& c : Oracle()) {
    for (const std::vector<std::string>& math : maths) {
      std::vector<std::string> want;
      for (const std::string& m : math) {
        for (const std::string& line : UnderMath(c.portable, m)) want.push_back(line);
      }
      const std::vector<harness::Configuration> got =
          DefaultConfigurations(*OwnProfile(), c.threads, math, c.small_chunk_bytes);
      EXPECT_EQ(Described(got), want)
          << "threads " << ::testing::PrintToString(c.threads) << ", math "
          << ::testing::PrintToString(math) << ", small chunk " << c.small_chunk_bytes;
    }
  }
}

TEST(Matrix, LibmTwinsAreSpelledOut) {
  EXPECT_EQ(Described(DefaultConfigurations(*OwnProfile(), {4}, {"libm"}, 1000)),
            (std::vector<std::string>{"reference-libm reference 1 auto 0 libm 1 1 together",
                                      "cpu-t4-libm cpu 4 auto 0 libm 1 1 together",
                                      "cpu-t4-chunk1000-libm cpu 4 auto 1000 libm 1 1 together",
                                      "cpu-t4-tm3-tn5-rows2-libm cpu 4 auto 0 libm 1 1 together",
                                      "cpu-scalar-libm cpu 1 scalar 0 libm 1 1 together",
                                      "cpu-avx2-libm cpu 1 avx2 0 libm 1 1 together",
                                      "cpu-avx512-libm cpu 1 avx512 0 libm 1 1 together",
                                      "cpu-neon-libm cpu 1 neon 0 libm 1 1 together",
                                      "cpu-t4-b4-libm cpu 4 auto 0 libm 4 1 together",
                                      "cpu-t4-b8-staggered-libm cpu 4 auto 0 libm 8 1 staggered"}));
}

// --quant-dot int8 gives every configuration a twin named with -int8 after
// any math suffix, in the order math profile, then dot-product profile;
// only the name and `quant_dot` differ from the exact twin.
TEST(Matrix, Int8TwinsAreSpelledOutAfterTheMathSuffix) {
  const std::vector<harness::Configuration> exact =
      DefaultConfigurations(*OwnProfile(), {4}, {"portable", "libm"}, 1000);
  const std::vector<harness::Configuration> both =
      DefaultConfigurations(*OwnProfile(), {4}, {"portable", "libm"}, 1000, {"exact", "int8"});
  const size_t n = exact.size() / 2;
  ASSERT_EQ(both.size(), 4 * n);
  const std::vector<std::pair<std::string, std::string>> blocks = {
      {"", "exact"}, {"-int8", "int8"}, {"-libm", "exact"}, {"-libm-int8", "int8"}};
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (size_t i = 0; i < n; ++i) {
      const harness::Configuration& base = exact[i];
      const harness::Configuration& got = both[b * n + i];
      EXPECT_EQ(got.name, base.name + blocks[b].first);
      EXPECT_EQ(got.quant_dot, blocks[b].second) << got.name;
      EXPECT_EQ(got.math, b < 2 ? "portable" : "libm") << got.name;
      harness::Configuration same = got;
      same.name = base.name;
      same.math = base.math;
      same.quant_dot = base.quant_dot;
      EXPECT_EQ(Describe(same), Describe(base)) << got.name;
    }
  }
  EXPECT_EQ(Described(DefaultConfigurations(*OwnProfile(), {4}, {"libm"}, 1000, {"int8"}))[1],
            "cpu-t4-libm-int8 cpu 4 auto 0 libm 1 1 together");
  EXPECT_EQ(both[n + n - 1].name, "cpu-t4-b8-staggered-int8");
}

// Every configuration the matrix knows, named in any of its four forms
// with --math portable,libm --quant-dot exact,int8, runs under all four
// profiles, each once; --quant-dot exact (the default) adds no int8 twin.
TEST(Matrix, EveryNamedConfigurationRunsUnderEveryQuantDotProfile) {
  const std::vector<int> threads = {1, 2};
  const auto exact = DefaultConfigurations(*OwnProfile(), threads, {"portable"}, 8192);
  ASSERT_GT(exact.size(), 5u);
  for (const harness::Configuration& config : exact) {
    const std::string& base = config.name;
    for (const std::string& named : {base, base + "-int8", base + "-libm", base + "-libm-int8"}) {
      MatrixOptions o = TwoScenarios();
      o.scenario_files = {"/s/classic.json"};
      o.checkpoints = {"synthetic:tiny-q4_0"};
      o.threads = threads;
      o.math = {"portable", "libm"};
      o.quant_dot = {"exact", "int8"};
      o.configs = {named, named};
      std::vector<std::string> got;
      for (const Cell& cell : ExpandMatrix(o))
        got.push_back(cell.config.name + "/" + cell.config.math + "/" + cell.config.quant_dot);
      EXPECT_EQ(
          got, (std::vector<std::string>{base + "/portable/exact", base + "-int8/portable/int8",
                                         base + "-libm/libm/exact", base + "-libm-int8/libm/int8"}))
          << "--config " << named;
    }
  }
  MatrixOptions o = TwoScenarios();
  o.checkpoints = {"synthetic:tiny-q4_0"};
  o.scenario_files = {"/s/classic.json"};
  o.configs = {"reference"};
  EXPECT_EQ(ExpandMatrix(o).size(), 1u);
  // --quant-dot int8 alone: the int8 names are the configurations, as
  // --math libm alone makes the libm names.
  o.quant_dot = {"int8"};
  EXPECT_THROW(ExpandMatrix(o), std::invalid_argument);
  o.configs = {"reference-int8"};
  const auto int8_only = ExpandMatrix(o);
  ASSERT_EQ(int8_only.size(), 1u);
  EXPECT_EQ(int8_only[0].config.name, "reference-int8");
  // An int8 name without --quant-dot int8 is no configuration of the run.
  o.quant_dot = {"exact"};
  o.configs = {"cpu-t1-int8"};
  EXPECT_THROW(ExpandMatrix(o), std::invalid_argument);
}

// An unknown dot-product profile, or none, is refused with the ones there are.
TEST(Matrix, AnUnknownQuantDotProfileIsRefused) {
  const auto refusal = [](std::vector<std::string> quant_dot) -> std::string {
    MatrixOptions o = TwoScenarios();
    o.quant_dot = std::move(quant_dot);
    try {
      ExpandMatrix(o);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(refusal({"exact", "int4"}), "--quant-dot: unknown profile 'int4' (exact or int8)");
  EXPECT_EQ(refusal({"Int8"}), "--quant-dot: unknown profile 'Int8' (exact or int8)");
  EXPECT_EQ(refusal({}), "--quant-dot: no profile given (exact or int8)");
  EXPECT_EQ(refusal({"int8"}), "accepted");
}

// Every ISA of the profile's isa axis gets its cell, in the axis's order
// (a new ISA needs no edit of engines/samebits.json but its isa axis, and
// TheProfilesIsaValuesAreTheKernelTablesIsas holds the axis to the table).
TEST(Matrix, EveryIsaOfTheEngineGetsItsCell) {
  std::vector<std::string> isas;
  for (const harness::Configuration& c :
       DefaultConfigurations(*OwnProfile(), {1}, {"portable"}, 8192)) {
    if (c.isa != "auto") isas.push_back(c.isa);
  }
  EXPECT_EQ(isas, ProfileIsas(*OwnProfile()));
  EXPECT_EQ(isas, kernels::IsaNames());
}

TEST(Matrix, TheDefaultCheckpointsAreTheProfiles) {
  EXPECT_EQ(OwnProfile()->matrix_checkpoints,
            (std::vector<std::string>{
                "synthetic:tiny", "synthetic:gemma", "synthetic:medium", "synthetic:wide",
                "synthetic:tiny-q4_0", "synthetic:tiny-q4_1", "synthetic:tiny-q5_0",
                "synthetic:tiny-q5_1", "synthetic:medium-q8_0", "synthetic:medium-q4_k",
                "synthetic:medium-q5_k", "synthetic:medium-q6_k"}));
}

TEST(Matrix, ExpandsCheckpointsTimesScenariosTimesConfigurations) {
  const auto cells = ExpandMatrix(TwoScenarios());
  ASSERT_EQ(cells.size(), OwnProfile()->matrix_checkpoints.size() * 2u * 12u);
  ASSERT_EQ(OwnProfile()->matrix_checkpoints.size(),
            12u);  // tiny, gemma, medium, wide, 8 quantized variants
  EXPECT_EQ(cells[0].checkpoint, "synthetic:tiny");
  EXPECT_EQ(cells[0].scenario, "classic");
  EXPECT_EQ(cells[0].scenario_file, "/s/classic.json");
  EXPECT_EQ(cells[0].config.name, "reference");
  EXPECT_EQ(cells[12].scenario, "long");
  EXPECT_EQ(cells.back().checkpoint, "synthetic:medium-q6_k");
}

// Which ISAs the engine lacks is the engine's to say (unavailable_test.cc):
// the matrix marks nothing UNSUPPORTED by itself.
TEST(Matrix, EveryCellIsRunnableAsFarAsTheProfileKnows) {
  for (const Cell& c : ExpandMatrix(TwoScenarios())) {
    EXPECT_TRUE(c.supported) << c.config.name;
  }
}

TEST(Matrix, SelectionNarrowsEveryAxis) {
  MatrixOptions o = TwoScenarios();
  o.checkpoints = {"synthetic:tiny"};
  o.scenario_files = {"/s/classic.json"};
  o.configs = {"cpu-t4", "reference", "cpu-t4"};
  o.threads = {1, 4};
  const auto cells = ExpandMatrix(o);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].config.name, "cpu-t4");
  EXPECT_EQ(cells[0].config.threads, 4);
  EXPECT_EQ(cells[1].config.name, "reference");
}

TEST(Matrix, UnknownConfigurationListsTheKnownOnes) {
  MatrixOptions o = TwoScenarios();
  o.configs = {"cpu-t2-fast"};
  try {
    ExpandMatrix(o);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cpu-t2-fast"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("cpu-t3-chunk8k"), std::string::npos);
    // What the profile's grammar said of it.
    EXPECT_NE(std::string(e.what()).find("fast"), std::string::npos);
  }
}

// Names are parsed by the profile's grammar, not matched against the names
// --threads makes: cpu-t9 is threads 9 whatever --threads says.
TEST(Matrix, AnyNameTheProfileReadsIsSelected) {
  MatrixOptions o = TwoScenarios();
  o.checkpoints = {"synthetic:tiny"};
  o.scenario_files = {"/s/classic.json"};
  o.configs = {"cpu-t9", "cpu-t5-chunk16k-b4"};
  ASSERT_EQ(o.threads, (std::vector<int>{1, 2, 3}));
  const std::vector<Cell> cells = ExpandMatrix(o);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].config.name, "cpu-t9");
  EXPECT_EQ(cells[0].config.threads, 9);
  EXPECT_EQ(cells[1].config.threads, 5);
  EXPECT_EQ(cells[1].config.gemv_chunk_bytes, 16384);
  EXPECT_EQ(cells[1].config.batch, 4);
  // A name whose numeric profile is not selected is refused (its twins
  // would run without it); selected, it runs beside its twins.
  o.configs = {"cpu-t9-libm"};
  EXPECT_THROW(ExpandMatrix(o), std::invalid_argument);
  o.math = {"portable", "libm"};
  const std::vector<Cell> twins = ExpandMatrix(o);
  ASSERT_EQ(twins.size(), 2u);
  EXPECT_EQ(twins[0].config.name, "cpu-t9");
  EXPECT_EQ(twins[1].config.name, "cpu-t9-libm");
}

TEST(Matrix, BadSelectionsAreErrors) {
  MatrixOptions none;
  none.profile = OwnProfile();
  EXPECT_THROW(ExpandMatrix(none), std::invalid_argument);
  MatrixOptions no_profile = TwoScenarios();
  no_profile.profile = nullptr;
  EXPECT_THROW(ExpandMatrix(no_profile), std::invalid_argument);
  MatrixOptions bad_threads = TwoScenarios();
  bad_threads.threads = {0};
  EXPECT_THROW(ExpandMatrix(bad_threads), std::invalid_argument);
  MatrixOptions bad_math = TwoScenarios();
  bad_math.math = {"fast"};
  EXPECT_THROW(ExpandMatrix(bad_math), std::invalid_argument);
  MatrixOptions duplicate = TwoScenarios();
  duplicate.scenario_files = {"/a/classic.json", "/b/classic.json"};
  EXPECT_THROW(ExpandMatrix(duplicate), std::invalid_argument);
  try {
    ExpandMatrix(duplicate);
  } catch (const std::invalid_argument& e) {
    // Both files are named, so the user knows which two collide.
    EXPECT_NE(std::string(e.what()).find("/a/classic.json and /b/classic.json"), std::string::npos)
        << e.what();
  }
}

// Every tuning knob of the engine (engine/model/tuning.h) is an axis of its
// profile, so the gate can vary it: its flag with the value, 0 (the
// engine's choice, no flag) as default and the knob's maximum as the top of
// the range, and an echo of the value the run used (gemv_chunk_bytes, older
// than hello's tuning object, is echoed from hello's config).
TEST(Matrix, EveryTuningKnobIsAnAxisOfTheOwnProfile) {
  const EngineProfile& p = *OwnProfile();
  for (const model::TuningKnob& knob : model::TuningKnobs()) {
    const std::string name(knob.name);
    const runner::EngineAxis* axis = p.Axis(name);
    ASSERT_NE(axis, nullptr) << name << " is no axis of engines/samebits.json";
    EXPECT_TRUE(axis->is_range) << name;
    EXPECT_EQ(axis->min, 0) << name;
    EXPECT_EQ(axis->max, knob.max) << name;
    EXPECT_EQ(axis->default_value, std::optional<std::string>("0")) << name;
    EXPECT_FALSE(axis->argv_at_default) << name;
    EXPECT_EQ(axis->argv, (std::vector<std::string>{std::string(knob.flag), "{value}"})) << name;
    const std::string key =
        name == "gemv_chunk_bytes" ? "config.gemv_chunk_bytes" : "tuning.knobs." + name;
    EXPECT_TRUE(std::any_of(
        p.hello.begin(), p.hello.end(),
        [&](const runner::HelloEcho& e) { return e.key == key && e.value == "{" + name + "}"; }))
        << name << " has no echo " << key;
  }
}

// One list of ISAs: the profile's isa axis is `auto` and the kernels'
// table (engine/kernels/dispatch.cc's kIsas, which the CPU probe's
// choice, --isa's help and the matrix's cpu-<isa> cells also read), in its
// order, so a new ISA cannot reach the engine without its axis value.
TEST(Matrix, TheProfilesIsaValuesAreTheKernelTablesIsas) {
  const runner::EngineAxis* axis = OwnProfile()->Axis("isa");
  ASSERT_NE(axis, nullptr);
  std::vector<std::string> want = {"auto"};
  for (const std::string& isa : kernels::IsaNames()) want.push_back(isa);
  EXPECT_EQ(axis->values, want);
  EXPECT_EQ(ProfileIsas(*OwnProfile()), kernels::IsaNames());
}

// One batch limit: the engine's (--batch, bench's --batch-list) is its
// profile's batch range, which reads every batched name.
TEST(Matrix, TheBatchLimitIsTheEnginesAndTheProfileSaysIt) {
  const runner::EngineAxis* axis = OwnProfile()->Axis("batch");
  ASSERT_NE(axis, nullptr);
  ASSERT_TRUE(axis->is_range);
  EXPECT_EQ(axis->min, 1);
  EXPECT_EQ(axis->max, run::kMaxBatch);
}

// One thread limit: the engine's (--threads, --threads-list and
// SAMEBITS_THREADS all hold to it) is its profile's threads range, and the
// matrix refuses by that range, naming it.
TEST(Matrix, TheThreadLimitIsTheEnginesAndTheProfileSaysIt) {
  const runner::EngineAxis* axis = OwnProfile()->Axis("threads");
  ASSERT_NE(axis, nullptr);
  ASSERT_TRUE(axis->is_range);
  EXPECT_EQ(axis->min, 1);
  EXPECT_EQ(axis->max, threads::kMaxThreads);
  MatrixOptions at_limit = TwoScenarios();
  at_limit.threads = {threads::kMaxThreads};
  EXPECT_NO_THROW(ExpandMatrix(at_limit));
  MatrixOptions over = TwoScenarios();
  over.threads = {threads::kMaxThreads + 1};
  try {
    ExpandMatrix(over);
    ADD_FAILURE() << "a thread count over the limit was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(threads::kMaxThreads + 1) +
                                         " is not a thread count (1 to " +
                                         std::to_string(threads::kMaxThreads) + ")"),
              std::string::npos)
        << e.what();
  }
}

TEST(Matrix, StartOrderRunsTheLongestCellsFirstAndKeepsEveryCell) {
  std::vector<Cell> cells = ExpandMatrix(TwoScenarios());
  for (Cell& c : cells) c.supported = c.config.isa != "neon";  // as MarkUnavailable leaves them
  const std::vector<size_t> order = StartOrder(cells);
  ASSERT_EQ(order.size(), cells.size());
  std::vector<size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_EQ(cells[order.front()].checkpoint, "synthetic:wide");
  EXPECT_EQ(cells[order.front()].config.name, "reference");
  EXPECT_EQ(cells[order.back()].config.name, "cpu-neon");  // runs no child at all
}

Cell NamedCell(const std::string& checkpoint, const std::string& scenario,
               const std::string& config) {
  Cell cell;
  cell.checkpoint = checkpoint;
  cell.scenario = scenario;
  cell.config.name = config;
  return cell;
}

TEST(Matrix, DumpFileNamesAreSafeAndDistinct) {
  // Plain names are kept as they are.
  EXPECT_EQ(DumpFileName(NamedCell("tiny", "classic", "cpu-t3")), "tiny.classic.cpu-t3.f32");
  // Anything else becomes '_' plus a hash of the original names.
  const std::string a = DumpFileName(NamedCell("synthetic:tiny", "classic", "cpu-t3"));
  const std::string b = DumpFileName(NamedCell("synthetic/tiny", "classic", "cpu-t3"));
  const std::string c = DumpFileName(NamedCell("../../etc/passwd", "x y", "cpu-t1"));
  EXPECT_EQ(a.rfind("synthetic_tiny.classic.cpu-t3-", 0), 0u) << a;
  EXPECT_NE(a, b);
  for (const std::string& name : {a, b, c}) {
    EXPECT_EQ(name.find('/'), std::string::npos) << name;
    EXPECT_EQ(name.find(' '), std::string::npos) << name;
    EXPECT_NE(name.front(), '.') << name;
    EXPECT_TRUE(name.ends_with(".f32")) << name;
  }
  // A long checkpoint path is cut, keeping the configuration's name.
  const std::string long_name =
      DumpFileName(NamedCell("/" + std::string(300, 'd') + "/model.safetensors", "s", "cpu-t2"));
  EXPECT_LE(long_name.size(), 120u + 1 + 16 + 4);
  EXPECT_NE(long_name.find("cpu-t2-"), std::string::npos) << long_name;
}

}  // namespace
}  // namespace samebits::runner
