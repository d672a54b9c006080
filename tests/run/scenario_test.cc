// Scenario files are parsed strictly: every mistake is an error naming the
// file, the step and the problem. Random prompts are a pure function of the
// seed, the index and the vocabulary.
#include "engine/run/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

namespace samebits::run {
namespace {

using ::testing::HasSubstr;

const char* kClassic = R"({
  "name": "classic",
  "prompt": {"random": {"length": 12, "seed": 7}},
  "sampler": {"kind": "greedy"},
  "steps": [{"prefill": "prompt"}, {"decode": 4},
            {"extend": {"random": {"length": 7, "seed": 3}}}, {"decode": 2}]
})";

TEST(ScenarioTest, ParsesTheClassicShape) {
  const Scenario s = ParseScenario(kClassic, "classic.json");
  EXPECT_EQ(s.name, "classic");
  EXPECT_EQ(s.file, "classic.json");
  EXPECT_EQ(s.prompt.kind, TokenSource::Kind::kRandom);
  EXPECT_EQ(s.prompt.random, (RandomTokenSpec{12, 7, 3}));
  EXPECT_EQ(s.sampler.kind, model::SamplerConfig::Kind::kGreedy);
  ASSERT_EQ(s.steps.size(), 4u);
  EXPECT_EQ(s.steps[0].kind, ScenarioStep::Kind::kPrefill);
  EXPECT_FALSE(s.steps[0].all_positions);
  EXPECT_EQ(s.steps[1].decode_count, 4);
  EXPECT_EQ(s.steps[2].kind, ScenarioStep::Kind::kExtend);
  EXPECT_EQ(s.steps[2].chunk.random.length, 7);
  EXPECT_EQ(s.steps[3].decode_count, 2);
}

TEST(ScenarioTest, ParsesTokensTextSamplerAndAllPositions) {
  const Scenario s = ParseScenario(R"({
    "name": "x", "description": "d",
    "prompt": {"tokens": [1, 14, 51]},
    "sampler": {"kind": "sample", "temperature": 0.8, "top_k": 20, "top_p": 0.95, "seed": 18446744073709551615},
    "steps": [{"prefill": "prompt", "all_positions": true},
              {"extend": {"text": "Once upon a time"}, "all_positions": false},
              {"extend": {"tokens": [0]}, "all_positions": true}]
  })",
                                   "x.json");
  EXPECT_EQ(s.prompt.tokens, (std::vector<int32_t>{1, 14, 51}));
  EXPECT_EQ(s.sampler.kind, model::SamplerConfig::Kind::kSample);
  EXPECT_EQ(s.sampler.temperature, 0.8f);
  EXPECT_EQ(s.sampler.top_k, 20);
  EXPECT_EQ(s.sampler.top_p, 0.95f);
  EXPECT_EQ(s.sampler.seed, 18446744073709551615ULL);
  EXPECT_TRUE(s.steps[0].all_positions);
  EXPECT_EQ(s.steps[1].chunk.kind, TokenSource::Kind::kText);
  EXPECT_EQ(s.steps[1].chunk.text, "Once upon a time");
  EXPECT_TRUE(s.steps[2].all_positions);
}

TEST(ScenarioTest, TheSamplerDefaultsToGreedy) {
  const Scenario s = ParseScenario(
      R"({"name": "g", "prompt": {"tokens": [5]}, "steps": [{"prefill": "prompt"}]})", "g.json");
  EXPECT_EQ(s.sampler.kind, model::SamplerConfig::Kind::kGreedy);
}

// Replaces `from` in the classic scenario by `to` and returns the error.
std::string ErrorOf(const std::string& text) {
  try {
    ParseScenario(text, "bad.json");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(accepted)";
}

std::string Classic(const std::string& from, const std::string& to) {
  std::string text = kClassic;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(ScenarioTest, ErrorsNameTheFileTheStepAndTheProblem) {
  struct Case {
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"{", "scenario bad.json: not valid JSON"},
      {"[]", "scenario bad.json: the top level must be an object, not an array"},
      {Classic("\"name\": \"classic\"", "\"nmae\": \"classic\""), "unknown key 'nmae'"},
      {Classic("\"name\": \"classic\",", ""), "missing 'name'"},
      {Classic("\"classic\"", "3"), "'name' must be a non-empty string"},
      {Classic("{\"decode\": 4}", "{\"decode\": -1}"),
       "scenario bad.json: step 1: 'decode' must be a positive integer, not -1"},
      {Classic("{\"decode\": 4}", "{\"decode\": 0}"),
       "step 1: 'decode' must be a positive integer"},
      {Classic("{\"decode\": 4}", "{\"decode\": 2.5}"),
       "step 1: 'decode' must be a positive integer, not a fractional number"},
      {Classic("{\"decode\": 4}", "{\"decode\": \"4\"}"),
       "step 1: 'decode' must be a positive integer, not a string"},
      {Classic("{\"decode\": 4}", "{\"decode\": 4, \"all_positions\": true}"),
       "step 1: unknown key 'all_positions'"},
      {Classic("{\"decode\": 4}", "{\"decode\": 4, \"extend\": {\"tokens\": [1]}}"),
       "step 1: must have exactly one of 'prefill', 'decode' or 'extend'"},
      {Classic("{\"decode\": 4}", "{\"prefill\": \"prompt\"}"),
       "step 1: 'prefill' may only be the first step"},
      {Classic("{\"decode\": 4}", "7"), "step 1: must be an object, not an integer"},
      {Classic("{\"prefill\": \"prompt\"}, ", ""),
       "step 0: the first step must be {\"prefill\": \"prompt\"}"},
      {Classic("{\"prefill\": \"prompt\"}", "{\"prefill\": \"chunk\"}"),
       "step 0: 'prefill' must be \"prompt\""},
      {Classic("{\"prefill\": \"prompt\"}", "{\"prefill\": \"prompt\", \"all_positions\": 1}"),
       "step 0: 'all_positions' must be true or false"},
      {Classic("\"length\": 7", "\"length\": 0"),
       "step 2: extend.random: 'length' must be a positive integer"},
      {Classic("\"seed\": 3", "\"seed\": -3"),
       "step 2: extend.random: 'seed' must be a non-negative integer, not -3"},
      {Classic("\"seed\": 3", "\"seeds\": 3"), "step 2: extend.random: unknown key 'seeds'"},
      {Classic("{\"random\": {\"length\": 7, \"seed\": 3}}", "{\"tokens\": []}"),
       "step 2: extend.tokens: must not be empty"},
      {Classic("{\"random\": {\"length\": 7, \"seed\": 3}}", "{\"tokens\": [1, -2]}"),
       "step 2: extend.tokens: 'token 1' must be a non-negative integer, not -2"},
      {Classic("{\"random\": {\"length\": 7, \"seed\": 3}}", "{\"tokens\": [1], \"text\": \"a\"}"),
       "step 2: 'extend' must have exactly one of 'random', 'tokens' or 'text'"},
      {Classic("{\"random\": {\"length\": 7, \"seed\": 3}}", "{\"text\": \"\"}"),
       "'extend.text' must not be empty"},
      {Classic("{\"random\": {\"length\": 12, \"seed\": 7}}", "{\"words\": \"x\"}"),
       "unknown key 'words'"},
      {Classic("\"steps\": [", "\"steps\": [], \"x\": ["), "unknown key 'x'"},
      {"{\"name\": \"e\", \"prompt\": {\"tokens\": [1]}, \"steps\": []}",
       "'steps' must not be empty"},
      {"{\"name\": \"e\", \"prompt\": {\"tokens\": [1]}, \"steps\": {}}",
       "'steps' must be an array"},
      {"{\"name\": \"e\", \"prompt\": {\"tokens\": [1]}}", "missing 'steps'"},
      {Classic("\"greedy\"", "\"greediest\""), "sampler: unknown kind 'greediest'"},
      {Classic("{\"kind\": \"greedy\"}", "{\"kind\": \"greedy\", \"seed\": 1}"),
       "sampler: unknown key 'seed'"},
      {Classic("{\"kind\": \"greedy\"}", "{\"kind\": \"sample\"}"), "sampler: missing 'seed'"},
      {Classic("{\"kind\": \"greedy\"}", "{\"kind\": \"sample\", \"seed\": 1, \"temperature\": 0}"),
       "sampler: 'temperature' must be a finite number above 0"},
      {Classic("{\"kind\": \"greedy\"}", "{\"kind\": \"sample\", \"seed\": 1, \"top_p\": 1.5}"),
       "sampler: 'top_p' must be in (0, 1]"},
      {Classic("{\"kind\": \"greedy\"}", "{\"kind\": \"sample\", \"seed\": 1, \"top_k\": -1}"),
       "sampler: 'top_k' must be a non-negative integer"},
      {Classic("{\"decode\": 4}", "{\"decode\": 100000000}"), "more than the limit"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(ErrorOf(c.text), HasSubstr(c.message)) << c.text;
  }
}

TEST(ScenarioTest, MutatedFilesAreParsedOrRejectedNeverCrash) {
  // Every single-byte substitution of the classic scenario from a fixed
  // alphabet: the parser accepts it or throws ScenarioError, nothing else.
  const std::string text = kClassic;
  const char alphabet[] = {'"', '{', '}', '[', ']', ',', ':', '0', '-', '.', 'x', '\0'};
  int rejected = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    for (const char c : alphabet) {
      std::string mutated = text;
      mutated[i] = c;
      try {
        ParseScenario(mutated, "m.json");
      } catch (const ScenarioError& e) {
        ++rejected;
        EXPECT_EQ(std::string(e.what()).rfind("scenario m.json: ", 0), 0u) << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "unexpected " << e.what() << " for " << mutated;
      }
    }
  }
  EXPECT_GT(rejected, 0);
}

TEST(ScenarioTest, LoadScenarioNamesAMissingFile) {
  try {
    LoadScenario("/nonexistent/scenario.json");
    FAIL() << "accepted a missing file";
  } catch (const ScenarioError& e) {
    EXPECT_THAT(e.what(), HasSubstr("scenario /nonexistent/scenario.json: cannot open"));
  }
}

TEST(ScenarioTest, TheDefaultScenariosParse) {
  for (const char* name : {"classic", "sampled", "window"}) {
    const std::string path = std::string(SAMEBITS_SOURCE_DIR) + "/scenarios/" + name + ".json";
    const Scenario s = LoadScenario(path);
    EXPECT_EQ(s.name, name);
  }
}

TEST(RandomTokensTest, IsDeterministicAndCounterBased) {
  const RandomTokenSpec spec{40, 7, 3};
  const std::vector<int32_t> a = RandomTokens(spec, 256);
  EXPECT_EQ(a, RandomTokens(spec, 256));
  // Token i does not depend on how many are drawn: a prefix is a prefix.
  RandomTokenSpec shorter = spec;
  shorter.length = 5;
  const std::vector<int32_t> b = RandomTokens(shorter, 256);
  EXPECT_TRUE(std::equal(b.begin(), b.end(), a.begin()));
  // Another seed gives another sequence.
  RandomTokenSpec other = spec;
  other.seed = 8;
  EXPECT_NE(RandomTokens(other, 256), a);
}

TEST(RandomTokensTest, StaysInRangeAndCoversIt) {
  const RandomTokenSpec spec{2000, 1, 3};
  std::set<int32_t> seen;
  for (const int32_t t : RandomTokens(spec, 16)) {
    EXPECT_GE(t, 3);
    EXPECT_LT(t, 16);
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 13u);
  EXPECT_EQ(RandomTokens(RandomTokenSpec{3, 9, 0}, 1), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_THROW(RandomTokens(RandomTokenSpec{3, 9, 16}, 16), std::invalid_argument);
}

TEST(RandomTokensTest, MatchesTheDocumentedFormula) {
  // scenarios/README.md: token i = first_token + splitmix64 output i % range,
  // where output i mixes seed + (i + 1) * 0x9e3779b97f4a7c15. Recomputed
  // here independently of the implementation.
  const auto mix = [](uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  const std::vector<int32_t> got = RandomTokens(RandomTokenSpec{4, 7, 3}, 256);
  for (uint64_t i = 0; i < 4; ++i) {
    const uint64_t z = mix(7 + (i + 1) * 0x9e3779b97f4a7c15ULL);
    EXPECT_EQ(got[i], static_cast<int32_t>(3 + z % 253)) << i;
  }
  // splitmix64 seeded with 0: its first output is the published value.
  EXPECT_EQ(mix(0x9e3779b97f4a7c15ULL), 0xe220a8397b1dcdafULL);
}

}  // namespace
}  // namespace samebits::run
