// `samebits-engine tokenize` through the real binary: text on stdin to the
// ids llama.cpp's conformance files expect, ids back to text, BOS on
// request, and clear errors (exit 2) for bad files and bad ids.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/data_folder.h"
#include "tests/support/engine_process.h"
#include "tests/tokenizer/vocab_cases_helpers.h"

namespace samebits::testing {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/tokenize_cli_" + name + "." + std::to_string(getpid());
}

// Runs `samebits-engine tokenize ARGS` with `input` on stdin.
EngineResult Tokenize(const std::string& args, const std::string& input) {
  return RunEngine("tokenize " + args, input);
}

std::string Vocab(const std::string& name) {
  return SharedVocab(name);
}

// Returns the conformance cases of vocabulary `name`.
std::vector<VocabCase> Cases(const std::string& name) {
  return ParseVocabCases(ReadWholeFile(Vocab(name) + ".inp"), ReadWholeFile(Vocab(name) + ".out"));
}

std::string Line(const std::vector<int32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? " " : "") + std::to_string(ids[i]);
  return out + "\n";
}

class TokenizeCli : public ::testing::TestWithParam<const char*> {};

// Every conformance input, through stdin, prints the expected ids on one
// line, and the ids through --decode print the input again.
TEST_P(TokenizeCli, PrintsTheConformanceIdsAndDecodesThemBack) {
  SAMEBITS_SKIP_WITHOUT_DATA(Vocab(GetParam()));
  const std::string vocab = "--vocab '" + Vocab(GetParam()) + "'";
  const auto cases = Cases(GetParam());
  // A few cases keep the test short: a plain one, a multi-line one, a non-Latin one.
  for (size_t i : {size_t{9}, size_t{31}, cases.size() - 1}) {
    ASSERT_LT(i, cases.size());
    const VocabCase& c = cases[i];
    const EngineResult enc = Tokenize(vocab, c.input);
    ASSERT_EQ(enc.exit_code, 0) << enc.err;
    EXPECT_EQ(enc.out, Line(c.expected)) << "input " << Escape(c.input);
    const EngineResult dec = Tokenize(vocab + " --decode", enc.out);
    ASSERT_EQ(dec.exit_code, 0) << dec.err;
    EXPECT_EQ(dec.out, c.input);
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, TokenizeCli, ::testing::Values("qwen2", "llama-spm"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(TokenizeCliTest, BosOnlyOnRequest) {
  SAMEBITS_SKIP_WITHOUT_DATA(Vocab("llama-spm"));
  const std::string vocab = "--vocab '" + Vocab("llama-spm") + "'";
  const EngineResult plain = Tokenize(vocab, "Hello");
  const EngineResult bos = Tokenize(vocab + " --bos", "Hello");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(bos.exit_code, 0) << bos.err;
  EXPECT_EQ(bos.out, "1 " + plain.out);  // llama-spm's BOS is <s>, id 1
}

TEST(TokenizeCliTest, ReadsLlama2cTokenizerBin) {
  const std::string bin = data_folder::Path("checkpoints/tokenizer.bin");
  SAMEBITS_SKIP_WITHOUT_DATA(bin);
  const EngineResult enc = Tokenize("--vocab '" + bin + "'", "Once upon a time");
  ASSERT_EQ(enc.exit_code, 0) << enc.err;
  EXPECT_THAT(enc.out, ::testing::MatchesRegex("[0-9]+( [0-9]+)*\n"));
  const EngineResult dec = Tokenize("--vocab '" + bin + "' --decode", enc.out);
  ASSERT_EQ(dec.exit_code, 0) << dec.err;
  EXPECT_EQ(dec.out, "Once upon a time");
}

TEST(TokenizeCliTest, HelpNamesEveryOption) {
  const EngineResult r = Tokenize("--help", "");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--vocab FILE"));
  EXPECT_THAT(r.out, HasSubstr("--bos"));
  EXPECT_THAT(r.out, HasSubstr("--decode"));
}

TEST(TokenizeCliTest, BadFilesAreUsageErrorsNamingTheFile) {
  const EngineResult missing = Tokenize("--vocab /nonexistent/vocab.gguf", "x");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/vocab.gguf: cannot open"));

  const std::string garbage = TempPath("garbage.bin");
  std::ofstream(garbage, std::ios::binary) << "this is not a vocabulary";
  const EngineResult bad = Tokenize("--vocab '" + garbage + "'", "x");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr(garbage));

  // A GGUF whose tokenizer.ggml.model says it has no vocabulary.
  // (export picks GGUF by the .gguf ending)
  const std::string no_vocab = TempPath("no_vocab") + ".gguf";
  const std::string export_cmd = std::string("'") + SAMEBITS_BINARY_DIR +
                                 "/bin/samebits-engine' export synthetic:tiny '" + no_vocab +
                                 "' 2>/dev/null";
  ASSERT_EQ(std::system(export_cmd.c_str()), 0);
  const EngineResult none = Tokenize("--vocab '" + no_vocab + "'", "x");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("has no vocabulary this engine can tokenize with"));
  EXPECT_THAT(none.err, HasSubstr("'no_vocab'"));
  std::filesystem::remove(garbage);
  std::filesystem::remove(no_vocab);
}

TEST(TokenizeCliTest, DecodeRefusesWordsThatAreNoIds) {
  SAMEBITS_SKIP_WITHOUT_DATA(Vocab("gpt-2"));
  const std::string vocab = "--vocab '" + Vocab("gpt-2") + "' --decode";
  const EngineResult word = Tokenize(vocab, "15496 hello");
  EXPECT_EQ(word.exit_code, 2);
  EXPECT_THAT(word.err, HasSubstr("'hello' on stdin is not a token id"));
  const EngineResult range = Tokenize(vocab, "15496 50257");
  EXPECT_EQ(range.exit_code, 2);
  EXPECT_THAT(range.err, HasSubstr("token id 50257 is outside the vocabulary of 50257 pieces"));
  const EngineResult negative = Tokenize(vocab, "-1");
  EXPECT_EQ(negative.exit_code, 2);
}

}  // namespace
}  // namespace samebits::testing
