// samebits-engine's scenario reader against the fixture files every reader
// of the format shares (tests/protocol/fixtures/scenarios/cases.json): each
// valid file expands to the steps the case lists, each malformed one is
// refused with the message it names. tests/protocol/scenario_mirror.py
// holds the Python adapters' readers to the same files.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "engine/run/scenario.h"

namespace samebits::run {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kFixtures = fs::path(SAMEBITS_SOURCE_DIR) / "tests/protocol/fixtures/scenarios";

json ReadCases() {
  std::ifstream in(kFixtures / "cases.json");
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

std::vector<int32_t> Expand(const TokenSource& source, int vocab_size) {
  if (source.kind == TokenSource::Kind::kRandom) return RandomTokens(source.random, vocab_size);
  return source.tokens;
}

// The steps as cases.json writes them: [kind, tokens or count, all_positions].
json Steps(const Scenario& s, int vocab_size) {
  json steps = json::array();
  for (const ScenarioStep& step : s.steps) {
    json tokens_or_count;
    switch (step.kind) {
      case ScenarioStep::Kind::kPrefill:
        tokens_or_count = Expand(s.prompt, vocab_size);
        break;
      case ScenarioStep::Kind::kDecode:
        tokens_or_count = step.decode_count;
        break;
      case ScenarioStep::Kind::kExtend:
        tokens_or_count = Expand(step.chunk, vocab_size);
        break;
    }
    steps.push_back({StepKindName(step.kind), tokens_or_count, step.all_positions});
  }
  return steps;
}

TEST(ScenarioFixtures, EveryCaseReadsAsItsEntrySays) {
  const json doc = ReadCases();
  const int vocab_size = doc.at("vocab_size").get<int>();
  int valid = 0, refused = 0;
  for (const json& c : doc.at("cases")) {
    const std::string file = c.at("file").get<std::string>();
    SCOPED_TRACE(file + ": " + c.at("about").get<std::string>());
    const std::string path = (kFixtures / file).string();
    if (c.contains("refused")) {
      ++refused;
      try {
        LoadScenario(path);
        ADD_FAILURE() << "read, but the case says it is refused";
      } catch (const ScenarioError& e) {
        EXPECT_NE(std::string(e.what()).find(c.at("refused").get<std::string>()), std::string::npos)
            << e.what();
        EXPECT_EQ(std::string(e.what()).rfind("scenario " + path, 0), 0u) << e.what();
      }
      continue;
    }
    ++valid;
    const Scenario s = LoadScenario(path);
    const bool expandable = s.prompt.kind != TokenSource::Kind::kText &&
                            s.sampler.kind == model::SamplerConfig::Kind::kGreedy;
    if (c.at("steps").is_null()) {
      EXPECT_FALSE(expandable) << "the case lists no steps, but they expand";
      continue;
    }
    ASSERT_TRUE(expandable);
    EXPECT_EQ(Steps(s, vocab_size), c.at("steps"));
  }
  // Every file of the folder is a case, and both kinds are there.
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kFixtures)) {
    files += entry.path().filename() != "cases.json" ? 1 : 0;
  }
  EXPECT_EQ(files, valid + refused);
  EXPECT_GE(valid, 5);
  EXPECT_GE(refused, 20);
}

}  // namespace
}  // namespace samebits::run
