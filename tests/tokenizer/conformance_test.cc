// llama.cpp's tokenizer conformance files: every input of
// ../shared/vocab/ggml-vocab-NAME.gguf.inp must tokenize to exactly the ids
// of NAME.gguf.out (no BOS), and those ids must decode to the input again.
#include <gtest/gtest.h>

#include "engine/formats/vocabulary_file.h"
#include "tests/support/data_folder.h"
#include "tests/support/engine_process.h"
#include "tests/tokenizer/vocab_cases_helpers.h"

namespace samebits::testing {
namespace {

class Conformance : public ::testing::TestWithParam<const char*> {};

TEST_P(Conformance, EveryInputGivesTheExpectedIdsAndDecodesBack) {
  const std::string gguf = SharedVocab(GetParam());
  SAMEBITS_SKIP_WITHOUT_DATA(gguf);
  const auto vocabulary = formats::LoadVocabularyFile(gguf);
  const auto cases = ParseVocabCases(ReadWholeFile(gguf + ".inp"), ReadWholeFile(gguf + ".out"));
  ASSERT_GT(cases.size(), 10u);
  int roundtrips = 0;
  const auto failures = CheckVocabCases(*vocabulary, cases, &roundtrips);
  for (const std::string& f : failures) ADD_FAILURE() << GetParam() << ": " << f;
  std::printf("%s: %zu cases, %zu failing, %d decoded back\n", GetParam(), cases.size(),
              failures.size(), roundtrips);
  EXPECT_EQ(roundtrips, static_cast<int>(cases.size()));
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, Conformance,
                         ::testing::Values("gpt-2", "llama-bpe", "qwen2", "llama-spm", "phi-3"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// Negative control: a case whose expected ids are wrong by one id is
// reported, with its input and both id lists.
TEST(ConformanceCheck, ReportsAWrongIdWithInputExpectedAndActual) {
  const std::string gguf = SharedVocab("gpt-2");
  SAMEBITS_SKIP_WITHOUT_DATA(gguf);
  const auto vocabulary = formats::LoadVocabularyFile(gguf);
  std::vector<VocabCase> cases = {{"Hello world", vocabulary->Tokenize("Hello world", false)}};
  int roundtrips = 0;
  EXPECT_TRUE(CheckVocabCases(*vocabulary, cases, &roundtrips).empty());
  cases[0].expected.back() += 1;
  const auto failures = CheckVocabCases(*vocabulary, cases, &roundtrips);
  ASSERT_EQ(failures.size(), 2u);  // the ids differ, and the wrong ids decode to other text
  EXPECT_NE(failures[0].find("\"Hello world\""), std::string::npos) << failures[0];
  EXPECT_NE(failures[0].find("expected ["), std::string::npos) << failures[0];
  EXPECT_NE(failures[0].find(", got ["), std::string::npos) << failures[0];
}

TEST(VocabCases, ReadLikeLlamaCppTestTokenizer0) {
  const auto cases = ParseVocabCases(
      "a b\n__ggml_vocab_test__\n\n__ggml_vocab_test__\n\n\n__ggml_vocab_test__\n \n",
      "1 2\n\n 3 \n4\n");
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(cases[0].input, "a b");
  EXPECT_EQ(cases[1].input, "");
  EXPECT_EQ(cases[2].input, "\n");
  EXPECT_EQ(cases[3].input, " \n");  // the last input keeps its final newline
  EXPECT_EQ(cases[0].expected, (std::vector<int32_t>{1, 2}));
  EXPECT_TRUE(cases[1].expected.empty());
  EXPECT_EQ(cases[2].expected, (std::vector<int32_t>{3}));
  EXPECT_THROW(ParseVocabCases("a\n__ggml_vocab_test__\nb", "1\n"), std::runtime_error);
}

}  // namespace
}  // namespace samebits::testing
