// Export then load gives the same weights (HashWeights) and bit-identical
// logits, for synthetic checkpoints of every shape and for the real files,
// through GGUF and through safetensors (single file and sharded).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf.h"
#include "engine/formats/gguf_config.h"
#include "engine/formats/gguf_writer.h"
#include "engine/formats/safetensors.h"
#include "engine/formats/vocabulary.h"
#include "engine/model/synthetic.h"
#include "engine/model/tensor_spec.h"
#include "tests/formats/formats_test_helpers.h"

namespace samebits::formats {
namespace {

class SyntheticRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(SyntheticRoundTrip, Gguf) {
  const model::ModelWeights w = LoadCheckpoint("synthetic:" + GetParam());
  const std::string path = testing::ScratchDir("gguf-" + GetParam()) + "/model.gguf";
  WriteGguf(w, path);
  testing::ExpectSameModel(w, LoadCheckpoint("gguf:" + path));
  testing::ExpectSameModel(w, LoadCheckpoint(path));  // recognised by content
}

TEST_P(SyntheticRoundTrip, Safetensors) {
  const model::ModelWeights w = LoadCheckpoint("synthetic:" + GetParam());
  const std::string dir = testing::ScratchDir("st-" + GetParam());
  WriteSafetensors(w, dir);
  testing::ExpectSameModel(w, LoadCheckpoint("safetensors:" + dir));
  testing::ExpectSameModel(w, LoadCheckpoint(dir));  // a directory is safetensors
  WriteSafetensors(w, dir, 3);
  EXPECT_TRUE(std::filesystem::exists(dir + "/model.safetensors.index.json"));
  testing::ExpectSameModel(w, LoadCheckpoint("safetensors:" + dir));
}

INSTANTIATE_TEST_SUITE_P(Shapes, SyntheticRoundTrip,
                         ::testing::Values("tiny", "medium", "tiny-f32", "tiny-f16"));

// Gemma's operations round-trip through GGUF (through safetensors:
// tests/formats/hf_classes_test.cc).
class GemmaGgufRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(GemmaGgufRoundTrip, Gguf) {
  const model::ModelWeights w = LoadCheckpoint("synthetic:" + GetParam());
  ASSERT_EQ(GgufUnwritableSwitches(w.config), "");
  const std::string path = testing::ScratchDir("gguf-" + GetParam()) + "/model.gguf";
  WriteGguf(w, path);
  testing::ExpectSameModel(w, LoadCheckpoint("gguf:" + path));
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmaGgufRoundTrip,
                         ::testing::Values("gemma", "gemma-f32", "gemma-q8_0"));

// llama.cpp's files of issue 25's architectures, written again, load as
// the same model (Phi-3's fused gate/up is written fused and read split).
// That llama.cpp reads them as it reads the originals is checked with
// llama.cpp itself (tests/harness/llamacpp_adapter_test.cc).
TEST(RealRoundTrip, NewArchitecturesGgufKeepsEveryBit) {
  SKIP_WITHOUT_CHECKPOINTS();
  for (const char* name :
       {"tiny_dense_gemma2_f32.gguf", "tiny_dense_gemma2_bf16.gguf", "tiny_dense_gemma3_f32.gguf",
        "tiny_dense_cohere2_f32.gguf", "tiny_dense_cohere2_bf16.gguf", "tiny_dense_llama3_f32.gguf",
        "tiny_dense_phi3_f32.gguf"}) {
    SCOPED_TRACE(name);
    const model::ModelWeights w = LoadCheckpoint("gguf:" + testing::Checkpoint(name));
    const std::string dir = testing::ScratchDir(std::string("real-") + name);
    WriteGguf(w, dir + "/again.gguf");
    testing::ExpectSameModel(w, LoadCheckpoint("gguf:" + dir + "/again.gguf"));
  }
}

// Sliding windows are written as llama.cpp reads them: one window and a
// per-layer array of which layers slide, which llama.cpp takes before its
// architecture's fixed pattern, so a layout other than that pattern is kept.
TEST(GgufWindows, AreWrittenAsLlamaCppReadsThemAndReadBackWithoutOurKeys) {
  model::ModelWeights w = LoadCheckpoint("synthetic:gemma-f32");
  w.config.arch = "gemma2";  // pattern 2 would make layers (8, 0, 8)
  w.config.rope_base_local = 0.0f;
  w.config.layers[1].sliding_window = 8;
  w.config.layers[2].sliding_window = 0;  // (8, 8, 0)
  ASSERT_EQ(GgufUnwritableSwitches(w.config), "");
  std::vector<std::byte> bytes = GgufBytes(w);
  const GgufFile file = ParseGguf(bytes, "windows");
  ASSERT_NE(file.Find("gemma2.attention.sliding_window"), nullptr);
  EXPECT_EQ(file.Find("gemma2.attention.sliding_window")->u, 8u);
  const GgufValue* pattern = file.Find("gemma2.attention.sliding_window_pattern");
  ASSERT_NE(pattern, nullptr);
  ASSERT_EQ(pattern->items.size(), 3u);
  EXPECT_TRUE(pattern->items[0].b);
  EXPECT_TRUE(pattern->items[1].b);
  EXPECT_FALSE(pattern->items[2].b);
  // Our own per-layer key renamed away, the reader takes llama.cpp's.
  const std::string ours = "samebits.layer.sliding_window";
  const auto at = std::search(bytes.begin(), bytes.end(), ours.begin(), ours.end(),
                              [](std::byte b, char c) { return b == std::byte(c); });
  ASSERT_NE(at, bytes.end());
  *at = std::byte('x');
  const std::string path = testing::ScratchDir("gguf-windows") + "/model.gguf";
  testing::WriteBytes(path, bytes);
  const model::ModelConfig read = LoadCheckpoint("gguf:" + path).config;
  ASSERT_EQ(read.layers.size(), 3u);
  EXPECT_EQ(read.layers[0].sliding_window, 8);
  EXPECT_EQ(read.layers[1].sliding_window, 8);
  EXPECT_EQ(read.layers[2].sliding_window, 0);
}

// Phi-3 files hold each dense layer's gate and up as one `ffn_up` (rows
// gate, then up), the only form llama.cpp loads; the export writes that.
TEST(GgufFusedGateUp, PhiThreeIsWrittenFused) {
  model::ModelWeights w = LoadCheckpoint("synthetic:gemma-f32");
  w.config.arch = "phi3";
  w.config.post_norms = false;
  w.config.attn_softcap = w.config.final_softcap = 0.0f;
  w.config.embedding_scale = 1.0f;
  w.config.activation = model::Activation::kSilu;
  w.config.rope_base_local = 0.0f;
  ASSERT_EQ(GgufUnwritableSwitches(w.config), "");
  const std::vector<std::byte> bytes = GgufBytes(w);
  const GgufFile file = ParseGguf(bytes, "phi3");
  int fused = 0;
  for (const GgufTensorInfo& t : file.tensors) {
    EXPECT_EQ(t.name.find("ffn_gate"), std::string::npos) << t.name;
    if (t.name.ends_with("ffn_up.weight")) {
      ++fused;
      ASSERT_EQ(t.ne.size(), 2u);
      EXPECT_EQ(t.ne[1], 2u * static_cast<uint64_t>(w.config.ffn_dim)) << t.name;
    }
  }
  EXPECT_EQ(fused, w.config.n_layers());
  const std::string path = testing::ScratchDir("gguf-phi3") + "/model.gguf";
  testing::WriteBytes(path, bytes);
  testing::ExpectSameModel(w, LoadCheckpoint("gguf:" + path));
}

// A switch the architecture name would not imply, or an implied one the
// model lacks, cannot be stated in GGUF and is named.
TEST(GgufUnwritable, SwitchesTheArchitectureDoesNotImplyAreNamed) {
  model::ModelConfig gemma = LoadCheckpoint("synthetic:gemma").config;
  EXPECT_EQ(GgufUnwritableSwitches(gemma), "");
  model::ModelConfig llama = gemma;
  llama.arch = "llama";
  EXPECT_EQ(GgufUnwritableSwitches(llama),
            "post_norms, attn_softcap, final_softcap, embedding_scale, GELU activation, "
            "rope_base_local");
  gemma.embedding_scale = 2.0f;
  gemma.rope_base_local = 0.0f;
  EXPECT_EQ(GgufUnwritableSwitches(gemma), "embedding_scale, rope_base_local");
  model::ModelConfig gemma2 = LoadCheckpoint("synthetic:gemma").config;
  gemma2.arch = "gemma2";
  EXPECT_EQ(GgufUnwritableSwitches(gemma2), "rope_base_local");
  EXPECT_EQ(GgufUnwritableSwitches(LoadCheckpoint("synthetic:tiny").config), "");
  // llama.cpp's sliding layers share one window; Cohere2's global layers,
  // and only they, go without RoPE.
  model::ModelConfig windows = LoadCheckpoint("synthetic:gemma").config;
  windows.layers[2].sliding_window = 4;
  EXPECT_EQ(GgufUnwritableSwitches(windows), "sliding windows of different widths");
  if (!testing::HaveCheckpoints()) return;
  model::ModelConfig cohere =
      LoadCheckpoint("gguf:" + testing::Checkpoint("tiny_dense_cohere2_f32.gguf")).config;
  EXPECT_EQ(GgufUnwritableSwitches(cohere), "");
  cohere.layers[0].use_rope = !cohere.layers[0].use_rope;
  EXPECT_EQ(GgufUnwritableSwitches(cohere), "RoPE on a global layer or none on a sliding one");
}

TEST(RealRoundTrip, GgufAndSafetensorsKeepEveryBit) {
  SKIP_WITHOUT_CHECKPOINTS();
  for (const char* name :
       {"tiny_moe_mixtral_bf16.gguf", "stories260K.gguf", "llama-2-tiny-random.gguf"}) {
    SCOPED_TRACE(name);
    const model::ModelWeights w = LoadCheckpoint("gguf:" + testing::Checkpoint(name));
    const std::string dir = testing::ScratchDir(std::string("real-") + name);
    WriteGguf(w, dir + "/again.gguf");
    const model::ModelWeights g = LoadCheckpoint("gguf:" + dir + "/again.gguf");
    testing::ExpectSameModel(w, g);
    if (w.vocabulary) {
      ASSERT_TRUE(g.vocabulary);
      EXPECT_EQ(g.vocabulary->pieces(), w.vocabulary->pieces());
    }
    WriteSafetensors(w, dir + "/st");
    testing::ExpectSameModel(w, LoadCheckpoint("safetensors:" + dir + "/st"));
  }
}

// Mixtral and Qwen3-MoE HF names: per-expert tensors gathered into 3-D ones.
TEST(Safetensors, HfExpertNamesAreGathered) {
  for (const char* spec : {"synthetic:tiny", "synthetic:medium"}) {
    const model::ModelWeights w = LoadCheckpoint(spec);
    if (w.config.n_experts == 0) continue;
    const std::string dir = testing::ScratchDir("hf-experts");
    WriteSafetensors(w, dir);
    TensorTable table;
    const auto bytes = testing::ReadBytes(dir + "/model.safetensors");
    ParseSafetensors(bytes, "model.safetensors", table);
    const bool qwen = w.config.qk_norm || w.config.arch == "qwen3moe";
    EXPECT_EQ(table.count(qwen ? "model.layers.0.mlp.experts.1.gate_proj.weight"
                               : "model.layers.0.block_sparse_moe.experts.1.w1.weight"),
              1u)
        << spec;
  }
}

}  // namespace
}  // namespace samebits::formats

namespace samebits::formats {
namespace {

// Without our samebits.* keys a qwen3moe file means what llama.cpp makes of
// it: NeoX RoPE, q/k norms, renormalised top-k, the expert width from
// expert_feed_forward_length.
TEST(GgufConfig, Qwen3MoeDefaultsWithoutSamebitsKeys) {
  const model::ModelWeights w = LoadCheckpoint("synthetic:tiny");
  if (w.config.arch != "qwen3moe") GTEST_SKIP() << "synthetic:tiny is " << w.config.arch;
  const auto bytes = GgufBytes(w);
  GgufFile f = ParseGguf(bytes, "tiny.gguf");
  for (auto it = f.metadata.begin(); it != f.metadata.end();) {
    it = it->first.rfind("samebits.", 0) == 0 ? f.metadata.erase(it) : std::next(it);
  }
  const model::ModelConfig c = GgufToConfig(f);
  EXPECT_EQ(c.rope_style, model::RopeStyle::kNeox);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_TRUE(c.renormalize_top_k);
  EXPECT_EQ(c.expert_ffn_dim, w.config.expert_ffn_dim);
  EXPECT_EQ(c.n_experts, w.config.n_experts);
  EXPECT_EQ(c.top_k, w.config.top_k);
  EXPECT_EQ(c.head_dim, w.config.head_dim);
}

}  // namespace
}  // namespace samebits::formats

namespace samebits::formats {
namespace {

// Older Mixtral conversions store each expert as its own tensor; those are
// gathered into the same 3-D expert tensors.
TEST(GgufPerExpert, GatheredIntoMergedExperts) {
  SKIP_WITHOUT_CHECKPOINTS();
  const model::ModelWeights w =
      LoadCheckpoint("gguf:" + testing::Checkpoint("tiny_moe_mixtral_f32.gguf"));
  const auto bytes = GgufBytes(w, {.per_expert_tensors = true});
  const GgufFile f = ParseGguf(bytes, "per-expert.gguf");
  bool found = false;
  for (const auto& t : f.tensors) found |= t.name == "blk.1.ffn_down.3.weight";
  EXPECT_TRUE(found);
  const model::ModelWeights g = LoadGgufBytes(bytes, nullptr, "per-expert.gguf");
  testing::ExpectSameModel(w, g);
  // A missing expert is named.
  auto cut = bytes;
  const std::string victim = "blk.0.ffn_up.2.weight";
  auto it = std::search(cut.begin(), cut.end(), reinterpret_cast<const std::byte*>(victim.data()),
                        reinterpret_cast<const std::byte*>(victim.data()) + victim.size());
  ASSERT_NE(it, cut.end());
  *(it + 13) =
      std::byte{'7'};  // blk.0.ffn_up.7.weight: expert 2 missing, an unknown tensor present
  try {
    LoadGgufBytes(cut, nullptr, "per-expert.gguf");
    ADD_FAILURE() << "loaded with expert 2 missing";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("blk.0.ffn_up.2.weight"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace samebits::formats
