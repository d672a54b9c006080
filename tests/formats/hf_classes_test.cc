// The transformers classes of issue 25 (Gemma2ForCausalLM, Gemma3ForCausalLM,
// Cohere2ForCausalLM, Phi3ForCausalLM): the export writes transformers'
// tensor names and configuration keys, the loader gives back the same bits
// (also from transformers' keys alone, our `samebits_*` keys removed), and
// what the classes cannot state is refused. Not checked with transformers
// itself (it is not installed here): the names and keys follow its
// configuration and modeling files.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "engine/formats/checkpoint.h"
#include "engine/formats/safetensors.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/tensor_spec.h"
#include "tests/formats/formats_test_helpers.h"

namespace samebits::formats {
namespace {

using nlohmann::json;
using testing::LoadError;
using testing::ReadConfig;
using testing::WriteConfig;

const std::map<std::string, std::string> kClassOf = {{"gemma2", "Gemma2ForCausalLM"},
                                                     {"gemma3", "Gemma3ForCausalLM"},
                                                     {"cohere2", "Cohere2ForCausalLM"},
                                                     {"phi3", "Phi3ForCausalLM"}};

// Removes our `samebits_*` keys from DIR/config.json: transformers' keys
// alone then describe the model.
void DropSamebitsKeys(const std::string& dir) {
  json j = ReadConfig(dir);
  for (auto it = j.begin(); it != j.end();) {
    it = it.key().rfind("samebits_", 0) == 0 ? j.erase(it) : std::next(it);
  }
  WriteConfig(dir, j);
}

// Returns synthetic:SPEC (gemma, gemma-f32, gemma-q8_0) as a model of GGUF
// architecture `arch`, with that architecture's switches. synthetic:gemma
// carries Llama 3.1's frequency factors, which safetensors cannot state:
// they are dropped.
model::ModelWeights SyntheticAs(const std::string& spec, const std::string& arch) {
  model::ModelWeights w = LoadCheckpoint("synthetic:" + spec);
  model::ModelConfig& c = w.config;
  c.rope_freq_factors = false;
  w.rope_freqs = {};
  c.arch = arch;
  if (arch == "gemma3") return w;
  c.rope_base_local = 0.0f;
  c.qk_norm = false;
  if (arch == "gemma2") return w;
  c.post_norms = false;
  c.attn_softcap = c.final_softcap = 0.0f;
  c.embedding_scale = 1.0f;
  c.activation = model::Activation::kSilu;
  if (arch == "cohere2") {
    c.norm = model::NormKind::kLayerNorm;
    c.parallel_block = true;
    c.rope_style = model::RopeStyle::kInterleaved;
    c.logit_scale = 0.25f;
    for (auto& l : c.layers) l.use_rope = l.sliding_window > 0;
  } else {  // phi3: transformers applies its window to every layer
    for (auto& l : c.layers) l.sliding_window = 8;
  }
  return w;
}

// Writes `w` as safetensors (one file, then two shards), expects class
// `cls`, and expects the same model back, then again from transformers'
// keys alone. A quantized model comes back as its F32 values.
void ExpectSafetensorsRoundTrip(const model::ModelWeights& w, const std::string& cls,
                                const std::string& name) {
  ASSERT_EQ(SafetensorsUnwritableSwitches(w.config), "");
  const model::ModelWeights expected = model::DequantizedWeights(w);
  const std::string dir = testing::ScratchDir("hf-" + name);
  WriteSafetensors(w, dir, 2);
  testing::ExpectSameModel(expected, LoadCheckpoint("safetensors:" + dir));
  WriteSafetensors(w, dir);
  EXPECT_EQ(ReadConfig(dir)["architectures"][0], cls);
  testing::ExpectSameModel(expected, LoadCheckpoint("safetensors:" + dir));
  DropSamebitsKeys(dir);
  model::ModelWeights hf_only = LoadCheckpoint("safetensors:" + dir);
  hf_only.config.name = expected.config.name;  // our name was a samebits key
  testing::ExpectSameModel(expected, hf_only);
}

class SyntheticHfClasses : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(SyntheticHfClasses, RoundTripBitForBit) {
  const auto& [spec, arch] = GetParam();
  ExpectSafetensorsRoundTrip(SyntheticAs(spec, arch), kClassOf.at(arch), spec + "-" + arch);
}

INSTANTIATE_TEST_SUITE_P(Variants, SyntheticHfClasses,
                         ::testing::Combine(::testing::Values("gemma", "gemma-f32", "gemma-q8_0"),
                                            ::testing::Values("gemma2", "gemma3", "cohere2",
                                                              "phi3")),
                         [](const auto& info) {
                           std::string n = std::get<0>(info.param) + "_" + std::get<1>(info.param);
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

// llama.cpp's files of these architectures, through safetensors and back.
TEST(RealHfClasses, SharedFilesRoundTripBitForBit) {
  SKIP_WITHOUT_CHECKPOINTS();
  for (const char* name : {"tiny_dense_gemma2_f32.gguf", "tiny_dense_gemma2_bf16.gguf",
                           "tiny_dense_gemma3_f32.gguf", "tiny_dense_cohere2_f32.gguf",
                           "tiny_dense_cohere2_bf16.gguf", "tiny_dense_phi3_f32.gguf"}) {
    SCOPED_TRACE(name);
    const model::ModelWeights w = LoadCheckpoint("gguf:" + testing::Checkpoint(name));
    ExpectSafetensorsRoundTrip(w, kClassOf.at(w.config.arch), name);
  }
}

// Gemma's RMSNorm multiplies by (1 + w): each norm weight is stored F32 as
// w - 1 under transformers' names (post_attention_layernorm being the norm
// after attention), and (w - 1) + 1 gives back every one of them.
TEST(HfGemmaNorms, AreStoredAsWMinusOneUnderTransformersNames) {
  std::vector<std::string> specs = {"synthetic:gemma", "synthetic:gemma-f32"};
  if (testing::HaveCheckpoints()) {
    for (const char* f : {"tiny_dense_gemma2_f32.gguf", "tiny_dense_gemma2_bf16.gguf",
                          "tiny_dense_gemma3_f32.gguf"}) {
      specs.push_back("gguf:" + testing::Checkpoint(f));
    }
  }
  using L = model::LayerWeights;
  const std::pair<const char*, model::TensorView L::*> kLayerNorms[] = {
      {"input_layernorm", &L::attn_norm},
      {"post_attention_layernorm", &L::post_attn_norm},
      {"pre_feedforward_layernorm", &L::ffn_norm},
      {"post_feedforward_layernorm", &L::post_ffn_norm},
      {"self_attn.q_norm", &L::q_norm},
      {"self_attn.k_norm", &L::k_norm},
  };
  for (const std::string& spec : specs) {
    SCOPED_TRACE(spec);
    model::ModelWeights w = LoadCheckpoint(spec);
    w.config.rope_freq_factors = false;
    w.rope_freqs = {};
    const std::string dir = testing::ScratchDir("hf-norms");
    WriteSafetensors(w, dir);
    const std::vector<std::byte> bytes = testing::ReadBytes(dir + "/model.safetensors");
    TensorTable table;
    ParseSafetensors(bytes, "model.safetensors", table);
    int64_t checked = 0;
    const auto expect_minus_one = [&](const std::string& hf, const model::TensorView& v) {
      if (!v.present()) return;
      const auto it = table.find(hf);
      ASSERT_NE(it, table.end()) << hf;
      ASSERT_EQ(it->second.dtype, model::DType::kF32) << hf;
      const std::vector<float> x = testing::TensorValues(v);
      for (size_t i = 0; i < x.size(); ++i) {
        float h = 0.0f;
        std::memcpy(&h, it->second.data + i * sizeof(float), sizeof h);  // little-endian host
        ASSERT_EQ(std::bit_cast<uint32_t>(h), std::bit_cast<uint32_t>(x[i] - 1.0f)) << hf << i;
        ASSERT_EQ(std::bit_cast<uint32_t>(h + 1.0f), std::bit_cast<uint32_t>(x[i])) << hf << i;
        ++checked;
      }
    };
    for (int l = 0; l < w.config.n_layers(); ++l) {
      for (const auto& [hf, member] : kLayerNorms) {
        expect_minus_one("model.layers." + std::to_string(l) + "." + hf + ".weight",
                         w.layers[l].*member);
      }
    }
    expect_minus_one("model.norm.weight", w.output_norm);
    int64_t norms = 0;  // every norm element of the model, to compare with `checked`
    model::ForEachTensor(w.config, [&](const model::TensorSpec& s) {
      if (s.name.ends_with("norm.weight")) norms += s.slot(w).elements();
    });
    EXPECT_EQ(checked, norms);
    EXPECT_GT(checked, 0);
    std::printf("%s: %lld norm weights, each (w - 1) + 1 == w in F32\n", spec.c_str(),
                static_cast<long long>(checked));
  }
}

// Phi-3's q, k, v and gate, up are written fused, in that row order.
TEST(HfPhi3, ProjectionsAreWrittenFused) {
  const model::ModelWeights w = SyntheticAs("gemma-f32", "phi3");
  const std::string dir = testing::ScratchDir("hf-phi3");
  WriteSafetensors(w, dir);
  const std::vector<std::byte> bytes = testing::ReadBytes(dir + "/model.safetensors");
  TensorTable table;
  ParseSafetensors(bytes, "model.safetensors", table);
  for (const auto& [name, t] : table) {
    EXPECT_EQ(name.find("q_proj"), std::string::npos) << name;
    EXPECT_EQ(name.find("gate_proj"), std::string::npos) << name;
  }
  for (int l = 0; l < w.config.n_layers(); ++l) {
    const std::string pre = "model.layers." + std::to_string(l) + ".";
    const model::LayerWeights& lw = w.layers[l];
    for (const auto& [hf, parts] :
         {std::pair{pre + "self_attn.qkv_proj.weight", std::vector{&lw.wq, &lw.wk, &lw.wv}},
          std::pair{pre + "mlp.gate_up_proj.weight", std::vector{&lw.ffn_gate, &lw.ffn_up}}}) {
      const auto it = table.find(hf);
      ASSERT_NE(it, table.end()) << hf;
      int64_t rows = 0;
      size_t offset = 0;
      for (const model::TensorView* v : parts) {
        EXPECT_EQ(std::memcmp(it->second.data + offset, v->data, v->bytes()), 0) << hf;
        rows += v->shape[0];
        offset += v->bytes();
      }
      EXPECT_EQ(it->second.shape, (std::vector<int64_t>{rows, w.config.d_model})) << hf;
    }
  }
}

// The keys of each class, as transformers' configuration classes name them.
TEST(HfClassKeys, AreTransformersOwn) {
  const std::string dir = testing::ScratchDir("hf-keys");
  WriteSafetensors(SyntheticAs("gemma", "gemma2"), dir);
  json j = ReadConfig(dir);
  EXPECT_EQ(j["model_type"], "gemma2");
  EXPECT_EQ(j["hidden_activation"], "gelu_pytorch_tanh");
  EXPECT_EQ(j["query_pre_attn_scalar"], 16);
  EXPECT_EQ(j["attn_logit_softcapping"], 4.0);
  EXPECT_EQ(j["final_logit_softcapping"], 6.0);
  EXPECT_EQ(j["sliding_window"], 8);
  EXPECT_EQ(j["sliding_window_pattern"], 2);
  EXPECT_EQ(j["layer_types"], json({"sliding_attention", "full_attention", "sliding_attention"}));
  EXPECT_EQ(j["tie_word_embeddings"], true);
  EXPECT_FALSE(j.contains("rope_local_base_freq"));

  WriteSafetensors(SyntheticAs("gemma", "gemma3"), dir);
  j = ReadConfig(dir);
  EXPECT_EQ(j["model_type"], "gemma3_text");
  EXPECT_EQ(j["rope_local_base_freq"], 10000.0);
  EXPECT_EQ(j["rope_theta"], 1e6);

  WriteSafetensors(SyntheticAs("gemma", "cohere2"), dir);
  j = ReadConfig(dir);
  EXPECT_EQ(j["model_type"], "cohere2");
  EXPECT_EQ(j["logit_scale"], 0.25);
  EXPECT_EQ(j["hidden_act"], "silu");
  EXPECT_TRUE(j.contains("layer_norm_eps"));
  EXPECT_FALSE(j.contains("rms_norm_eps"));
  EXPECT_EQ(j["layer_types"], json({"sliding_attention", "full_attention", "sliding_attention"}));

  WriteSafetensors(SyntheticAs("gemma", "phi3"), dir);
  j = ReadConfig(dir);
  EXPECT_EQ(j["model_type"], "phi3");
  EXPECT_EQ(j["sliding_window"], 8);
  EXPECT_FALSE(j.contains("layer_types"));
}

// Without `layer_types` (transformers before 4.53), `sliding_window_pattern`
// says which layers slide; without either, the class's own pattern.
TEST(HfClassKeys, SlidingPatternWithoutLayerTypes) {
  for (const char* arch : {"gemma2", "cohere2"}) {
    SCOPED_TRACE(arch);
    const model::ModelWeights w = SyntheticAs("gemma-f32", arch);
    const std::string dir = testing::ScratchDir("hf-pattern");
    WriteSafetensors(w, dir);
    DropSamebitsKeys(dir);
    json j = ReadConfig(dir);
    j.erase("layer_types");
    WriteConfig(dir, j);
    EXPECT_EQ(LoadCheckpoint("safetensors:" + dir).config.layers, w.config.layers);
    j.erase("sliding_window_pattern");
    WriteConfig(dir, j);
    // The class's pattern: Gemma 2 slides layers 0 and 2 (as written);
    // Cohere2 slides 0, 1 and 2 (its pattern 4), so layer 1 differs.
    const auto layers = LoadCheckpoint("safetensors:" + dir).config.layers;
    EXPECT_EQ(layers[0], w.config.layers[0]);
    EXPECT_EQ(layers[1].sliding_window, std::string(arch) == "gemma2" ? 0 : 8);
    EXPECT_EQ(layers[1].use_rope, true);
  }
}

// A configuration whose keys ask for what the engine does not compute is
// refused, naming the key.
TEST(HfClassKeys, WhatTheEngineDoesNotComputeIsRefused) {
  const std::string dir = testing::ScratchDir("hf-refused");
  WriteSafetensors(SyntheticAs("gemma-f32", "gemma2"), dir);
  const json good = ReadConfig(dir);
  const std::pair<const char*, json> kBad[] = {
      {"query_pre_attn_scalar", 256},
      {"hidden_activation", "gelu"},
      {"layer_types", json({"sliding", "full_attention", "sliding_attention"})},
  };
  for (const auto& [key, value] : kBad) {
    SCOPED_TRACE(key);
    json j = good;
    j[key] = value;
    WriteConfig(dir, j);
    EXPECT_NE(LoadError("safetensors:" + dir).find(key), std::string::npos)
        << LoadError("safetensors:" + dir);
  }
}

// What a class cannot state is named, and nothing is written.
TEST(HfUnwritable, SwitchesTheClassCannotStateAreNamed) {
  const model::ModelWeights gemma = LoadCheckpoint("synthetic:gemma");
  EXPECT_EQ(SafetensorsUnwritableSwitches(gemma.config), "rope_freq_factors");
  const std::string dir = testing::ScratchDir("hf-unwritable") + "/out";
  EXPECT_THROW(WriteSafetensors(gemma, dir), CheckpointError);
  EXPECT_FALSE(std::filesystem::exists(dir));

  model::ModelConfig c = SyntheticAs("gemma", "gemma3").config;
  c.rope_style = model::RopeStyle::kInterleaved;
  c.rope_dim = 8;
  EXPECT_EQ(SafetensorsUnwritableSwitches(c),
            "another rotary layout than Gemma3ForCausalLM's, partial rotary dimensions");
  c = SyntheticAs("gemma", "cohere2").config;
  c.head_dim = 8;
  EXPECT_EQ(SafetensorsUnwritableSwitches(c),
            "head_dim other than hidden_size / num_attention_heads");
  c = SyntheticAs("gemma", "phi3").config;
  c.layers[1].sliding_window = 0;
  c.qkv_bias = true;
  EXPECT_EQ(SafetensorsUnwritableSwitches(c), "q/k/v biases, sliding windows on only some layers");
  c = SyntheticAs("gemma", "gemma2").config;
  c.layers[0].use_rope = false;
  c.logit_scale = 2.0f;
  EXPECT_EQ(SafetensorsUnwritableSwitches(c), "logit_scale, layers without RoPE");
  // Gemma's operations on a model written as another class (experts).
  c = SyntheticAs("gemma", "gemma2").config;
  c.n_experts = 2;
  EXPECT_EQ(SafetensorsUnwritableSwitches(c),
            "post_norms, attn_softcap, final_softcap, embedding_scale, GELU activation");
  if (!testing::HaveCheckpoints()) return;
  // Llama 3.1's factors are written as rope_scaling for the Llama class
  // (tests/formats/llama_export_test.cc).
  const model::ModelConfig llama3 =
      LoadCheckpoint("gguf:" + testing::Checkpoint("tiny_dense_llama3_f32.gguf")).config;
  EXPECT_EQ(SafetensorsUnwritableSwitches(llama3), "");
}

// A Gemma norm weight that w - 1 in F32 would not give back is refused,
// naming it, rather than written inexactly.
TEST(HfUnwritable, InexactNormWeightIsRefused) {
  model::ModelWeights w = SyntheticAs("gemma-f32", "gemma2");
  std::vector<float> norm = testing::TensorValues(w.output_norm);
  norm[3] = 1e-9f;  // 1e-9 - 1 rounds to -1 in F32
  w.output_norm.data = reinterpret_cast<const std::byte*>(norm.data());
  try {
    WriteSafetensors(w, testing::ScratchDir("hf-inexact"));
    ADD_FAILURE() << "an inexact norm weight was written";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("'output_norm.weight' element 3"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace samebits::formats
