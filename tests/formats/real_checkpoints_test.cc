// The shared real checkpoints load with the configuration their READMEs
// describe, and their tokenizers turn text into the ids SentencePiece gives.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf.h"
#include "engine/formats/vocabulary.h"
#include "engine/model/tensor_spec.h"
#include "engine/run/scenario.h"
#include "tests/formats/formats_test_helpers.h"

namespace samebits::formats {
namespace {

using testing::Checkpoint;

TEST(RealCheckpoints, GgufHeadersParse) {
  SKIP_WITHOUT_CHECKPOINTS();
  for (const char* name :
       {"stories260K.gguf", "llama-2-tiny-random.gguf", "tiny_dense_llama_f32.gguf",
        "tiny_dense_llama_bf16.gguf", "tiny_moe_mixtral_f32.gguf", "tiny_moe_mixtral_bf16.gguf"}) {
    SCOPED_TRACE(name);
    const auto bytes = testing::ReadBytes(Checkpoint(name));
    const GgufFile f = ParseGguf(bytes, name);
    EXPECT_EQ(f.version, 3u);
    EXPECT_EQ(f.alignment, 32u);
    ASSERT_NE(f.Find("general.architecture"), nullptr);
    EXPECT_EQ(f.Find("general.architecture")->s, "llama");
    EXPECT_EQ(f.data_offset % 32, 0u);
  }
}

TEST(RealCheckpoints, Stories260KGguf) {
  SKIP_WITHOUT_CHECKPOINTS();
  const model::ModelWeights w = LoadCheckpoint("gguf:" + Checkpoint("stories260K.gguf"));
  const model::ModelConfig& c = w.config;
  EXPECT_EQ(c.d_model, 64);
  EXPECT_EQ(c.ffn_dim, 172);
  EXPECT_EQ(c.n_layers(), 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.rope_style, model::RopeStyle::kInterleaved);
  EXPECT_EQ(c.rope_base, 10000.0f);
  EXPECT_FALSE(c.tied_output);
  EXPECT_EQ(w.token_embedding.dtype, model::DType::kF32);
  ASSERT_TRUE(w.vocabulary);
  EXPECT_EQ(w.vocabulary->size(), 512);
  EXPECT_EQ(w.vocabulary->bos_id(), 1);
}

TEST(RealCheckpoints, Stories260KBin) {
  SKIP_WITHOUT_CHECKPOINTS();
  const model::ModelWeights w = LoadCheckpoint("llama2c:" + Checkpoint("stories260K.bin"));
  EXPECT_EQ(w.config.d_model, 64);
  EXPECT_EQ(w.config.n_layers(), 5);
  EXPECT_EQ(w.config.n_kv_heads, 4);
  EXPECT_EQ(w.config.max_seq_len, 512);
  EXPECT_TRUE(w.config.tied_output);
  // tokenizer.bin beside it has 32000 pieces, not 512: not this model's.
  EXPECT_FALSE(w.vocabulary);
  // The bare path is recognised by content as llama2.c.
  EXPECT_EQ(model::HashWeights(LoadCheckpoint(Checkpoint("stories260K.bin"))),
            model::HashWeights(w));
}

TEST(RealCheckpoints, MixtralStyleMoe) {
  SKIP_WITHOUT_CHECKPOINTS();
  for (const char* name : {"tiny_moe_mixtral_f32.gguf", "tiny_moe_mixtral_bf16.gguf"}) {
    SCOPED_TRACE(name);
    const model::ModelWeights w = LoadCheckpoint(Checkpoint(name));  // bare path: GGUF by content
    const model::ModelConfig& c = w.config;
    EXPECT_EQ(c.n_experts, 4);
    EXPECT_EQ(c.top_k, 2);
    EXPECT_EQ(c.expert_ffn_dim, 48);
    EXPECT_TRUE(c.renormalize_top_k);
    EXPECT_EQ(c.head_dim, 16);
    for (const auto& l : c.layers) EXPECT_TRUE(l.moe);
    EXPECT_EQ(w.layers[0].expert_gate.shape, (std::vector<int64_t>{4, 48, 64}));
    EXPECT_EQ(w.layers[0].expert_down.shape, (std::vector<int64_t>{4, 64, 48}));
    EXPECT_EQ(w.layers[0].router.dtype, model::DType::kF32);
  }
}

TEST(RealCheckpoints, TinyRandomIsF16WithRealVocabulary) {
  SKIP_WITHOUT_CHECKPOINTS();
  const model::ModelWeights w = LoadCheckpoint("gguf:" + Checkpoint("llama-2-tiny-random.gguf"));
  EXPECT_EQ(w.token_embedding.dtype, model::DType::kF16);
  EXPECT_EQ(w.config.d_model, 8);
  EXPECT_EQ(w.config.head_dim, 4);
  ASSERT_TRUE(w.vocabulary);
  const Vocabulary& v = *w.vocabulary;
  EXPECT_EQ(v.size(), 32000);
  // Ids SentencePiece's Llama-2 tokenizer gives (well known: "Hello" 15043, "▁world" 3186).
  EXPECT_EQ(v.Tokenize("Hello world", true), (std::vector<int32_t>{1, 15043, 3186}));
  for (const std::string text :
       {"Hello world", "Once upon a time, there was a little girl named Lily.",
        "tabs\tand\nnewlines  double  spaces", "héllo wörld — ünïcödé ✓ 日本語",
        "numbers 1234567890 and symbols !@#$%^&*()"}) {
    SCOPED_TRACE(text);
    const auto ids = v.Tokenize(text, true);
    EXPECT_EQ(ids.front(), 1);
    EXPECT_EQ(v.Detokenize(ids), text);
  }
}

TEST(RealCheckpoints, TokenizerBinMatchesGgufVocabulary) {
  SKIP_WITHOUT_CHECKPOINTS();
  const auto bin = LoadTokenizerBin(Checkpoint("tokenizer.bin"));
  const model::ModelWeights w = LoadCheckpoint("gguf:" + Checkpoint("llama-2-tiny-random.gguf"));
  ASSERT_EQ(bin->size(), 32000);
  for (const std::string text :
       {"Hello world", "One day, Tim saw a big dog.\nHe ran.", "naïve café ✓"}) {
    SCOPED_TRACE(text);
    const auto ids = bin->Tokenize(text, true);
    EXPECT_EQ(ids, w.vocabulary->Tokenize(text, true));
    EXPECT_EQ(bin->Detokenize(ids), text);
  }
  // tokenizer.bin survives a write and a re-parse exactly.
  const auto again = ParseTokenizerBin(WriteTokenizerBin(*bin), "rewritten", 32000);
  EXPECT_EQ(again->pieces(), bin->pieces());
}

}  // namespace
}  // namespace samebits::formats

namespace samebits::formats {
namespace {

// The scenarios for real checkpoints parse, and their text prompts tokenize
// with a real vocabulary.
TEST(RealScenarios, ParseAndTokenize) {
  const std::string dir = std::string(SAMEBITS_SOURCE_DIR) + "/scenarios/real";
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    // suite.json pairs checkpoints with these scenarios (harness/runner/suite.h).
    if (entry.path().extension() != ".json" || entry.path().filename() == "suite.json") continue;
    SCOPED_TRACE(entry.path().string());
    const run::Scenario s = run::LoadScenario(entry.path().string());
    ++n;
    if (s.prompt.kind == run::TokenSource::Kind::kText && testing::HaveCheckpoints()) {
      const model::ModelWeights w =
          LoadCheckpoint("gguf:" + testing::Checkpoint("llama-2-tiny-random.gguf"));
      const auto ids = w.vocabulary->Tokenize(s.prompt.text, true);
      EXPECT_GT(ids.size(), 3u);
      EXPECT_EQ(w.vocabulary->Detokenize(ids), s.prompt.text);
    }
  }
  EXPECT_GE(n, 4);
}

}  // namespace
}  // namespace samebits::formats
