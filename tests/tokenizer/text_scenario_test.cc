// Text in scenarios with every vocabulary: the prompt becomes llama.cpp's
// ids for the text, with BOS exactly when the file adds one
// (`tokenizer.ggml.add_bos_token`, else llama.cpp's default), an `extend`
// chunk the ids without BOS; and the engine's step records carry the
// decoded text of the chosen tokens.
#include <gtest/gtest.h>

#include "engine/formats/vocabulary_file.h"
#include "engine/protocol/records.h"
#include "engine/run/driver.h"
#include "engine/run/scenario.h"
#include "tests/support/data_folder.h"
#include "tests/support/engine_process.h"
#include "tests/tokenizer/vocab_cases_helpers.h"

namespace samebits::testing {
namespace {

struct VocabBos {
  const char* name;
  bool adds_bos;  // what the file says, or llama.cpp's default for it
};

class TextScenario : public ::testing::TestWithParam<VocabBos> {};

// Returns the expected ids of `input` in the conformance files of `name`.
std::vector<int32_t> ConformanceIds(const std::string& name, const std::string& input) {
  for (const VocabCase& c : ParseVocabCases(ReadWholeFile(SharedVocab(name) + ".inp"),
                                            ReadWholeFile(SharedVocab(name) + ".out"))) {
    if (c.input == input) return c.expected;
  }
  ADD_FAILURE() << "no conformance case " << Escape(input) << " for " << name;
  return {};
}

TEST_P(TextScenario, PromptHasBosAsTheFileSaysAndChunksHaveNone) {
  const std::string path = SharedVocab(GetParam().name);
  SAMEBITS_SKIP_WITHOUT_DATA(path);
  const auto vocabulary = formats::LoadVocabularyFile(path);
  EXPECT_EQ(vocabulary->add_bos(), GetParam().adds_bos);
  // A model as large as the vocabulary: only its sizes matter here.
  model::ModelConfig config;
  config.name = GetParam().name;
  config.vocab_size = vocabulary->size();
  config.max_seq_len = 4096;
  const run::Scenario s = run::ParseScenario(
      R"({"name":"t","prompt":{"text":"Hello world"},
          "steps":[{"prefill":"prompt"},{"extend":{"text":" Hello World"}}]})",
      "t.json");
  const run::PreparedScenario prepared = run::PrepareScenario(s, config, vocabulary.get());
  std::vector<int32_t> prompt = ConformanceIds(GetParam().name, "Hello world");
  if (GetParam().adds_bos) prompt.insert(prompt.begin(), vocabulary->bos_id());
  EXPECT_EQ(prepared.prompt, prompt);
  EXPECT_EQ(prepared.chunks[1], ConformanceIds(GetParam().name, " Hello World"));
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, TextScenario,
                         ::testing::Values(VocabBos{"gpt-2", false}, VocabBos{"qwen2", false},
                                           VocabBos{"llama-bpe", true}, VocabBos{"llama-spm", true},
                                           VocabBos{"phi-3", true}),
                         [](const auto& info) {
                           std::string name = info.param.name;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(TextScenarioEngine, StepRecordsCarryTheDecodedTextOfTheChosenToken) {
  const std::string gguf = data_folder::Path("checkpoints/stories260K.gguf");
  SAMEBITS_SKIP_WITHOUT_DATA(gguf);
  const EngineResult r = RunEngine("run --checkpoint 'gguf:" + gguf + "' --scenario '" +
                                       SAMEBITS_SOURCE_DIR + "/scenarios/real/text-story.json'",
                                   "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const protocol::Transcript t = protocol::ReadTranscript(r.out);
  ASSERT_TRUE(t.ok) << t.failure;
  const auto vocabulary = formats::LoadVocabularyFile(gguf);
  ASSERT_FALSE(t.steps.empty());
  std::string story;
  for (const protocol::Step& s : t.steps) {
    ASSERT_TRUE(s.text.has_value()) << "step " << s.index;
    EXPECT_EQ(*s.text, vocabulary->DecodeToken(s.input_token, s.token)) << "step " << s.index;
    if (s.kind == "decode") story += *s.text;
  }
  EXPECT_FALSE(story.empty());
  std::printf("stories260K continues the text with: %s\n", Escape(story).c_str());
}

TEST(TextScenarioEngine, StepsOfACheckpointWithoutVocabularyHaveNoText) {
  const EngineResult r =
      RunEngine("run --checkpoint synthetic:tiny --scenario '" + std::string(SAMEBITS_SOURCE_DIR) +
                    "/scenarios/classic.json'",
                "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("\"text\""), std::string::npos);
}

}  // namespace
}  // namespace samebits::testing
