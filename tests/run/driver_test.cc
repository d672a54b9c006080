// The driver on synthetic:tiny with the reference forward pass: repeatable,
// decode feeds the chosen token, positions and hashes are what a direct
// forward call gives, dumps and traces are complete.
#include "engine/run/driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include "engine/formats/checkpoint.h"
#include "engine/model/sampler.h"
#include "engine/numerics/hash.h"
#include "engine/run/logit_dump.h"
#include "tests/run/run_test_helpers.h"

namespace samebits::run {
namespace {

using ::testing::HasSubstr;

using test_support::Math;
const model::ModelWeights& Tiny() {
  static const model::ModelWeights weights = formats::LoadCheckpoint("synthetic:tiny");
  return weights;
}

using test_support::LoadDefault;

struct Captured {
  std::vector<StepResult> steps;  // `logits` cleared: copied below
  std::vector<std::vector<float>> logits;
  std::vector<TraceResult> traces;
};

Captured Drive(const Scenario& scenario, bool trace) {
  const PreparedScenario prepared = PrepareScenario(scenario, Tiny().config);
  auto forward = model::MakeReferenceForward(Tiny(), Math());
  Captured out;
  DriverSinks sinks;
  sinks.on_step = [&](const StepResult& s) {
    out.logits.emplace_back(s.logits.begin(), s.logits.end());
    StepResult copy = s;
    copy.logits = {};
    out.steps.push_back(copy);
  };
  if (trace) sinks.on_trace = [&](const TraceResult& t) { out.traces.push_back(t); };
  const RunSummary summary = RunScenario(prepared, Tiny().config, *forward, Math(), sinks);
  EXPECT_EQ(summary.steps, static_cast<int64_t>(out.steps.size()));
  EXPECT_EQ(summary.steps, prepared.total_steps);
  EXPECT_EQ(summary.positions, prepared.total_positions);
  return out;
}

bool SameSteps(const std::vector<StepResult>& a, const std::vector<StepResult>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].index != b[i].index || a[i].kind != b[i].kind || a[i].position != b[i].position ||
        a[i].input_token != b[i].input_token || a[i].token != b[i].token ||
        a[i].fnv1a64 != b[i].fnv1a64 || a[i].xxh3_64 != b[i].xxh3_64 ||
        a[i].argmax != b[i].argmax || a[i].nan_count != b[i].nan_count ||
        a[i].inf_count != b[i].inf_count) {
      return false;
    }
  }
  return true;
}

TEST(DriverTest, ClassicRunsTheDocumentedShape) {
  const Scenario scenario = LoadDefault("classic");
  const Captured run = Drive(scenario, false);
  ASSERT_EQ(run.steps.size(), 8u);
  const int positions[] = {11, 12, 13, 14, 15, 22, 23, 24};
  const char* kinds[] = {"prefill", "decode", "decode", "decode",
                         "decode",  "extend", "decode", "decode"};
  const std::vector<int32_t> prompt = RandomTokens(scenario.prompt.random, 256);
  const std::vector<int32_t> chunk = RandomTokens(scenario.steps[2].chunk.random, 256);
  for (size_t i = 0; i < run.steps.size(); ++i) {
    const StepResult& s = run.steps[i];
    EXPECT_EQ(s.index, static_cast<int>(i));
    EXPECT_STREQ(StepKindName(s.kind), kinds[i]);
    EXPECT_EQ(s.position, positions[i]);
    EXPECT_EQ(s.argmax, model::Argmax(run.logits[i]));
    EXPECT_EQ(s.token, s.argmax) << "greedy";
    EXPECT_EQ(s.fnv1a64, numerics::HashFloatsFnv1a(run.logits[i]));
    EXPECT_EQ(s.xxh3_64, numerics::HashFloatsXxh3(run.logits[i]));
    EXPECT_EQ(s.nan_count, 0);
    EXPECT_EQ(s.inf_count, 0);
  }
  EXPECT_EQ(run.steps[0].input_token, prompt.back());
  EXPECT_EQ(run.steps[5].input_token, chunk.back());
}

TEST(DriverTest, DecodeFeedsTheTokenChosenAtThePreviousRow) {
  for (const char* name : {"classic", "sampled"}) {
    const Captured run = Drive(LoadDefault(name), false);
    for (size_t i = 1; i < run.steps.size(); ++i) {
      if (run.steps[i].kind != ScenarioStep::Kind::kDecode) continue;
      EXPECT_EQ(run.steps[i].input_token, run.steps[i - 1].token) << name << " step " << i;
    }
  }
}

TEST(DriverTest, TheSameScenarioGivesTheSameStepsTwice) {
  for (const char* name : {"classic", "sampled", "window"}) {
    const Scenario scenario = LoadDefault(name);
    const Captured a = Drive(scenario, false);
    const Captured b = Drive(scenario, false);
    EXPECT_TRUE(SameSteps(a.steps, b.steps)) << name;
  }
}

TEST(DriverTest, SampledChoicesFollowTheSamplerWithTheStepIndex) {
  const Scenario scenario = LoadDefault("sampled");
  const Captured run = Drive(scenario, false);
  for (size_t i = 0; i < run.steps.size(); ++i) {
    EXPECT_EQ(run.steps[i].token, model::SampleToken(scenario.sampler, run.logits[i], i, Math()));
  }
}

TEST(DriverTest, RowsEqualADirectForwardCall) {
  // The decode row at position 12 of classic equals feeding the prompt and
  // then the chosen token by hand.
  const Scenario scenario = LoadDefault("classic");
  const Captured run = Drive(scenario, false);
  auto forward = model::MakeReferenceForward(Tiny(), Math());
  model::InferenceState state = model::MakeState(Tiny().config);
  std::vector<float> logits;
  forward->Run(state, RandomTokens(scenario.prompt.random, 256), false, logits, nullptr);
  ASSERT_EQ(logits.size(), run.logits[0].size());
  EXPECT_EQ(std::memcmp(logits.data(), run.logits[0].data(), logits.size() * 4), 0);
  const int32_t token = run.steps[0].token;
  forward->Run(state, std::span<const int32_t>(&token, 1), false, logits, nullptr);
  EXPECT_EQ(std::memcmp(logits.data(), run.logits[1].data(), logits.size() * 4), 0);
}

TEST(DriverTest, AllPositionsEmitsARowPerFedPosition) {
  const Captured run = Drive(LoadDefault("window"), false);
  ASSERT_EQ(run.steps.size(), 24u + 8u + 1u + 8u + 4u);
  // The prompt and the decodes: every position 0..31 is an output.
  for (size_t i = 0; i < 32; ++i) EXPECT_EQ(run.steps[i].position, static_cast<int>(i));
  // The long chunk emits its last row only; the short one every row.
  EXPECT_EQ(run.steps[32].position, 63);
  for (size_t i = 33; i < run.steps.size(); ++i) {
    EXPECT_EQ(run.steps[i].position, static_cast<int>(i) + 31);
    EXPECT_STREQ(StepKindName(run.steps[i].kind), i < 41 ? "extend" : "decode");
  }
  EXPECT_EQ(run.steps.back().position, 75) << "past both synthetic sliding windows";
}

TEST(DriverTest, TracesCoverEveryFedPositionAndFollowTheirSteps) {
  const Scenario scenario = LoadDefault("classic");
  const Captured plain = Drive(scenario, false);
  const Captured traced = Drive(scenario, true);
  EXPECT_TRUE(SameSteps(plain.steps, traced.steps)) << "tracing must not change a bit";
  ASSERT_FALSE(traced.traces.empty());
  std::set<int> positions;
  std::set<std::string> ops;
  for (const TraceResult& t : traced.traces) {
    positions.insert(t.position);
    ops.insert(t.op);
    EXPECT_GE(t.layer, -1);
    EXPECT_LT(t.layer, Tiny().config.n_layers());
  }
  EXPECT_EQ(positions.size(), 25u) << "12 prompt + 4 decode + 7 chunk + 2 decode positions";
  EXPECT_TRUE(ops.count("embed"));
  EXPECT_TRUE(ops.count("logits"));
  EXPECT_TRUE(ops.count("attn_norm"));
  // The same run traced twice gives the same trace.
  const Captured again = Drive(scenario, true);
  ASSERT_EQ(again.traces.size(), traced.traces.size());
  for (size_t i = 0; i < again.traces.size(); ++i) {
    EXPECT_EQ(again.traces[i].xxh3_64, traced.traces[i].xxh3_64) << i;
  }
}

TEST(DriverTest, DumpHoldsEveryRowLittleEndian) {
  const Scenario scenario = LoadDefault("classic");
  const std::string path = ::testing::TempDir() + "/driver_dump.f32." + std::to_string(getpid());
  const PreparedScenario prepared = PrepareScenario(scenario, Tiny().config);
  auto forward = model::MakeReferenceForward(Tiny(), Math());
  std::vector<std::vector<float>> rows;
  {
    LogitDumpWriter dump(path);
    DriverSinks sinks;
    sinks.on_step = [&](const StepResult& s) {
      dump.WriteRow(s.logits);
      rows.emplace_back(s.logits.begin(), s.logits.end());
    };
    RunScenario(prepared, Tiny().config, *forward, Math(), sinks);
    dump.Close();
  }
  std::ifstream in(path, std::ios::binary);
  const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                         std::istreambuf_iterator<char>());
  ASSERT_EQ(bytes.size(), 8u * 256u * 4u);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t i = 0; i < 256; ++i) {
      uint32_t bits = 0;
      for (int b = 0; b < 4; ++b) bits |= uint32_t{bytes[(r * 256 + i) * 4 + b]} << (8 * b);
      uint32_t expected;
      std::memcpy(&expected, &rows[r][i], 4);
      ASSERT_EQ(bits, expected) << "row " << r << " logit " << i;
    }
  }
  std::remove(path.c_str());
}

TEST(DriverTest, DumpToAnUnwritablePathNamesIt) {
  try {
    LogitDumpWriter dump("/nonexistent/dir/x.f32");
    FAIL() << "opened an impossible path";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("logit dump /nonexistent/dir/x.f32: cannot open"));
  }
}

std::string PrepareError(const std::string& json) {
  try {
    const Scenario s = ParseScenario(json, "p.json");
    PrepareScenario(s, Tiny().config);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(DriverTest, PreparationChecksTheScenarioAgainstTheCheckpoint) {
  EXPECT_THAT(
      PrepareError(
          R"({"name":"t","prompt":{"text":"Once upon a time"},"steps":[{"prefill":"prompt"}]})"),
      HasSubstr("scenario p.json: prompt: a 'text' prompt needs a tokenizer, and checkpoint "
                "synthetic:tiny has no vocabulary"));
  EXPECT_THAT(
      PrepareError(R"({"name":"t","prompt":{"tokens":[1,256]},"steps":[{"prefill":"prompt"}]})"),
      HasSubstr(
          "prompt: token 1 is 256, outside the vocabulary of checkpoint synthetic:tiny (256 ids)"));
  EXPECT_THAT(
      PrepareError(R"({"name":"t","prompt":{"tokens":[1]},"steps":[{"prefill":"prompt"},
                       {"extend":{"random":{"length":2,"seed":1,"first_token":300}}}]})"),
      HasSubstr("step 1: random tokens: first_token 300 is not below the vocabulary size 256"));
  EXPECT_THAT(
      PrepareError(
          R"({"name":"t","prompt":{"tokens":[1]},"steps":[{"prefill":"prompt"},{"decode":500}]})"),
      HasSubstr("needs 501 positions, more than the 128 that checkpoint synthetic:tiny allows"));
}

// A run whose KV cache alone would exceed the machine's memory is refused
// before the first token, naming the checkpoint; the same scenario on the
// real tiny checkpoint (a few KiB of cache) is the control.
TEST(DriverTest, PreparationRefusesAKvCacheLargerThanTheMachine) {
  const Scenario s = ParseScenario(
      R"({"name":"t","prompt":{"tokens":[1,2]},"steps":[{"prefill":"prompt"},{"decode":100}]})",
      "p.json");
  EXPECT_NO_THROW(PrepareScenario(s, Tiny().config));
  model::ModelConfig huge = Tiny().config;
  huge.name = "huge.gguf";
  huge.layers.resize(1 << 14);
  huge.n_kv_heads = 1 << 10;
  huge.head_dim = 1 << 10;  // 2 x 16384 layers x 102 positions x 4 MiB: ~13 TiB
  try {
    PrepareScenario(s, huge);
    ADD_FAILURE() << "a 13 TiB KV cache was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("needs 102 positions, whose KV cache for checkpoint huge.gguf"));
    EXPECT_THAT(e.what(), HasSubstr("exceeds this machine's memory"));
  }
}

TEST(DriverTest, TextIsTokenizedWithTheCheckpointsVocabulary) {
  // A byte-fallback vocabulary the size of tiny's: <unk>, <s>, </s>, then
  // one piece per byte value 3..255.
  std::vector<formats::Piece> pieces = {{"<unk>", 0.0f, formats::PieceType::kUnknown},
                                        {"<s>", 0.0f, formats::PieceType::kControl},
                                        {"</s>", 0.0f, formats::PieceType::kControl}};
  for (int b = 3; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    pieces.push_back({name, 0.0f, formats::PieceType::kByte});
  }
  const formats::Vocabulary vocabulary(pieces, 1, 2, "test vocabulary");
  const Scenario s = ParseScenario(
      R"({"name":"t","prompt":{"text":"Once upon a time"},
          "steps":[{"prefill":"prompt"},{"extend":{"text":" there"}}]})",
      "t.json");
  const PreparedScenario prepared = PrepareScenario(s, Tiny().config, &vocabulary);
  EXPECT_EQ(prepared.prompt, vocabulary.Tokenize("Once upon a time", true));
  EXPECT_EQ(prepared.prompt.front(), 1) << "a prompt starts with BOS";
  EXPECT_EQ(prepared.chunks[1], vocabulary.Tokenize(" there", false));
  EXPECT_NE(prepared.chunks[1].front(), 1) << "a chunk continues the sequence";
}

}  // namespace
}  // namespace samebits::run
