// GGUF `llama` files exported as transformers' LlamaForCausalLM: q/k rows
// unpermuted (transformers' rotate_half reads them as the model llama.cpp
// computes on the permuted rows) and Llama 3.1's `rope_freqs` as
// `rope_scaling`; our loader permutes the rows back and derives the same
// divisors, so the logits come back bit for bit. Also the refusals: rope
// scalings the engine does not implement, malformed ones, divisors no
// llama3 parameters give.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/formats/checkpoint.h"
#include "engine/formats/hf_rope.h"
#include "engine/formats/safetensors.h"
#include "engine/model/tensor_spec.h"
#include "tests/formats/formats_test_helpers.h"

namespace samebits::formats {
namespace {

using nlohmann::json;
using testing::LoadError;
using testing::ReadConfig;
using testing::WriteConfig;

std::vector<uint32_t> Bits(const std::vector<float>& v) {
  std::vector<uint32_t> out;
  out.reserve(v.size());
  for (const float x : v) out.push_back(std::bit_cast<uint32_t>(x));
  return out;
}

// The 48-token prompt of the shared dumps (BOS, then 3 + (37 i + 11) % 509):
// long enough for all three of the Llama 3.1 file's RoPE branches to act.
std::vector<int32_t> Prompt48() {
  std::vector<int32_t> t = {1};
  for (int i = 0; i < 47; ++i) t.push_back(3 + (37 * i + 11) % 509);
  return t;
}

// Expects `b` to compute `a`'s logits bit for bit on the 48-token prompt,
// through the reference pass and the 2-thread cpu pass.
void ExpectSameLogits(const model::ModelWeights& a, const model::ModelWeights& b) {
  std::vector<int32_t> tokens = Prompt48();
  for (int32_t& t : tokens) t %= a.config.vocab_size;
  EXPECT_TRUE(
      testing::SameBits(testing::ReferenceLogits(a, tokens), testing::ReferenceLogits(b, tokens)));
  EXPECT_TRUE(
      testing::SameBits(testing::CpuLogits(a, tokens, 2), testing::CpuLogits(b, tokens, 2)));
}

// A dense llama with every feature the export moves: adjacent-pair RoPE,
// q/k norms (their weights are reordered with the rows) and Llama 3.1
// divisors of a band other than Llama 3.1's (low 1.5, high 6, which no
// original context gives with 1 and 4), so the writer must solve for one. Built from
// synthetic:gemma-f32's tensors; the divisors live in `divisors`.
model::ModelWeights SyntheticLlama(std::vector<float>& divisors) {
  model::ModelWeights w = LoadCheckpoint("synthetic:gemma-f32");
  model::ModelConfig& c = w.config;
  c.arch = "llama";
  c.rope_style = model::RopeStyle::kInterleaved;
  c.rope_base_local = 0.0f;
  c.post_norms = false;
  c.attn_softcap = c.final_softcap = 0.0f;
  c.embedding_scale = 1.0f;
  c.activation = model::Activation::kSilu;
  for (auto& l : c.layers) l.sliding_window = 0;
  for (auto& l : w.layers) l.post_attn_norm = l.post_ffn_norm = {};
  divisors = Llama3FreqDivisors({.factor = 16.0,
                                 .low_freq_factor = 1.5,
                                 .high_freq_factor = 6.0,
                                 .original_max_position_embeddings = 128},
                                c.rope_base, c.rotary_dim());
  w.rope_freqs.data = reinterpret_cast<const std::byte*>(divisors.data());
  return w;
}

// GGUF -> safetensors -> load: the same weights hash, configuration and
// logits, bit for bit; config.json states transformers' reading.
TEST(LlamaExport, SafetensorsLoadsBackBitForBit) {
  std::vector<std::pair<std::string, model::ModelWeights>> models;
  std::vector<float> divisors;
  models.emplace_back("synthetic-llama", SyntheticLlama(divisors));
  if (testing::HaveCheckpoints()) {
    for (const char* name : {"tiny_dense_llama_f32.gguf", "tiny_dense_llama3_f32.gguf"})
      models.emplace_back(name, LoadCheckpoint("gguf:" + testing::Checkpoint(name)));
  }
  for (const auto& [name, w] : models) {
    SCOPED_TRACE(name);
    ASSERT_EQ(SafetensorsUnwritableSwitches(w.config), "");
    const std::string dir = testing::ScratchDir("llama-export-" + name);
    WriteSafetensors(w, dir);
    const json j = ReadConfig(dir);
    EXPECT_EQ(j["architectures"][0], "LlamaForCausalLM");
    EXPECT_EQ(j["samebits_qk_layout"], "unpermuted");
    EXPECT_EQ(j["samebits_rope_style"], "neox");  // what the stored rows take
    EXPECT_EQ(j.contains("rope_scaling"), w.config.rope_freq_factors);
    const model::ModelWeights back = LoadCheckpoint("safetensors:" + dir);
    EXPECT_EQ(back.config.rope_style, model::RopeStyle::kInterleaved);
    testing::ExpectSameModel(w, back);
    ExpectSameLogits(w, back);
  }
}

// Row r of each exported q/k head is GGUF row 2 (r % 8) + r / 8 (head
// dimension 16): transformers' row k * 8 + j is llama.cpp's 2 j + k.
TEST(LlamaExport, QkRowsAreWrittenUnpermuted) {
  SKIP_WITHOUT_CHECKPOINTS();
  const model::ModelWeights w =
      LoadCheckpoint("gguf:" + testing::Checkpoint("tiny_dense_llama_f32.gguf"));
  ASSERT_EQ(w.config.head_dim, 16);
  const std::string dir = testing::ScratchDir("llama-export-rows");
  WriteSafetensors(w, dir);
  const std::vector<std::byte> bytes = testing::ReadBytes(dir + "/model.safetensors");
  TensorTable table;
  ParseSafetensors(bytes, "model.safetensors", table);
  const int64_t d = w.config.d_model;
  const auto row = [&](const FileTensor& t, int64_t r) {
    std::vector<float> out(static_cast<size_t>(d));
    std::memcpy(out.data(), t.data + r * d * 4,
                static_cast<size_t>(d) * 4);  // F32, little-endian host
    return Bits(out);
  };
  for (const auto& [hf, view, heads] :
       {std::tuple{"model.layers.1.self_attn.q_proj.weight", &w.layers[1].wq, w.config.n_heads},
        std::tuple{"model.layers.1.self_attn.k_proj.weight", &w.layers[1].wk,
                   w.config.n_kv_heads}}) {
    SCOPED_TRACE(hf);
    const FileTensor& t = table.at(hf);
    const std::vector<float> gguf = testing::TensorValues(*view);
    const auto gguf_row = [&](int64_t r) {
      return Bits(std::vector<float>(gguf.begin() + r * d, gguf.begin() + (r + 1) * d));
    };
    // One mapping by hand: head 1's HF row 8 (second half, pair 0) is its GGUF row 1.
    EXPECT_EQ(row(t, 16 + 8), gguf_row(16 + 1));
    EXPECT_EQ(row(t, 16 + 1), gguf_row(16 + 2));
    for (int64_t h = 0; h < heads; ++h) {
      for (int r = 0; r < 16; ++r)
        EXPECT_EQ(row(t, h * 16 + r), gguf_row(h * 16 + int64_t{2} * (r % 8) + r / 8))
            << h << " " << r;
    }
  }
}

// The written rope_scaling gives back the file's divisors, every bit; the
// divisor function is llama.cpp's converter's, bit for bit.
TEST(LlamaRopeScaling, WrittenParametersRecomputeTheExactDivisors) {
  // llama.cpp's convert_hf_to_gguf.py, run with torch 1.13 (x86-64) on
  // Llama 3.1 8B's and Llama 3.2 1B's parameters: the divisors strictly
  // between 1 and factor (the others are exactly 1 and factor).
  const std::vector<float> llama31 = Llama3FreqDivisors({}, 5e5f, 128);
  ASSERT_EQ(llama31.size(), 64u);
  const std::vector<uint32_t> bits31 = Bits(llama31);
  EXPECT_EQ(std::vector<uint32_t>(bits31.begin() + 29, bits31.begin() + 35),
            (std::vector<uint32_t>{0x3f9a8ed5, 0x3fc6d64a, 0x4001af1d, 0x402c732e, 0x406bcace,
                                   0x40a83c06}));
  EXPECT_EQ(llama31[28], 1.0f);
  EXPECT_EQ(llama31[35], 8.0f);
  const std::vector<float> llama32 = Llama3FreqDivisors({.factor = 32.0}, 5e5f, 64);
  const std::vector<uint32_t> bits32 = Bits(llama32);
  EXPECT_EQ(std::vector<uint32_t>(bits32.begin() + 15, bits32.begin() + 18),
            (std::vector<uint32_t>{0x3fd35ec2, 0x4052b46f, 0x411aaaee}));
  EXPECT_EQ(llama32[14], 1.0f);
  EXPECT_EQ(llama32[18], 32.0f);
  // A fit finds parameters that give the same bits back: Llama 3.1's own,
  // and bands it must solve for from two or more divisors.
  EXPECT_EQ(FitLlama3RopeScaling(llama31, 5e5f, 128, 131072), Llama3RopeScaling{});
  for (const Llama3RopeScaling& p : {Llama3RopeScaling{.factor = 4.0,
                                    .low_freq_factor = 1.5,
                                    .high_freq_factor = 6.0,
                                    .original_max_position_embeddings = 4096},
                                     Llama3RopeScaling{.factor = 2.5,
                                     .low_freq_factor = 0.5,
                                     .high_freq_factor = 3.0,
                                     .original_max_position_embeddings = 32768}}) {
    const std::vector<float> divisors = Llama3FreqDivisors(p, 5e5f, 128);
    const auto fitted = FitLlama3RopeScaling(divisors, 5e5f, 128, 131072);
    ASSERT_TRUE(fitted.has_value()) << p.low_freq_factor;
    EXPECT_EQ(Bits(Llama3FreqDivisors(*fitted, 5e5f, 128)), Bits(divisors));
  }

  SKIP_WITHOUT_CHECKPOINTS();
  const model::ModelWeights w =
      LoadCheckpoint("gguf:" + testing::Checkpoint("tiny_dense_llama3_f32.gguf"));
  const std::vector<float> file = testing::TensorValues(w.rope_freqs);
  EXPECT_EQ(Bits(file)[1], 0x401c4dfbu);  // 2.4422596, the smoothed one
  const std::string dir = testing::ScratchDir("llama-export-scaling");
  WriteSafetensors(w, dir);
  const json s = ReadConfig(dir)["rope_scaling"];
  EXPECT_EQ(s, json::parse(R"({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                               "high_freq_factor": 4.0, "original_max_position_embeddings": 64})"));
  const Llama3RopeScaling read{s["factor"], s["low_freq_factor"], s["high_freq_factor"],
                               s["original_max_position_embeddings"]};
  EXPECT_EQ(Bits(Llama3FreqDivisors(read, w.config.rope_base, 16)), Bits(file));
  EXPECT_EQ(Bits(testing::TensorValues(LoadCheckpoint("safetensors:" + dir).rope_freqs)),
            Bits(file));

  // The synthetic llama's band is solved for: any parameters that give
  // every bit back will do.
  std::vector<float> divisors;
  const model::ModelWeights synthetic = SyntheticLlama(divisors);
  const std::string sdir = testing::ScratchDir("llama-export-solved");
  WriteSafetensors(synthetic, sdir);
  const json solved = ReadConfig(sdir)["rope_scaling"];
  EXPECT_EQ(solved["factor"], 16.0);
  const Llama3RopeScaling fitted{solved["factor"], solved["low_freq_factor"],
                                 solved["high_freq_factor"],
                                 solved["original_max_position_embeddings"]};
  EXPECT_EQ(Bits(Llama3FreqDivisors(fitted, synthetic.config.rope_base, 16)), Bits(divisors));
}

// Divisors no llama3 parameters give are refused, naming the tensor, and
// nothing is written.
TEST(LlamaRopeScaling, DivisorsNoParametersGiveAreRefused) {
  std::vector<float> divisors;
  model::ModelWeights w = SyntheticLlama(divisors);
  // One ulp off in the smoothed band.
  size_t band = 0;
  while (band < divisors.size() && (divisors[band] == 1.0f || divisors[band] == 16.0f)) ++band;
  ASSERT_LT(band, divisors.size());
  divisors[band] = std::nextafter(divisors[band], 100.0f);
  const std::string dir = testing::ScratchDir("llama-export-unfit") + "/out";
  try {
    WriteSafetensors(w, dir);
    ADD_FAILURE() << "written";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("rope_freqs are not Llama 3.1's"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("nothing was written"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
  // Divisors below 1 (synthetic:gemma's) too.
  const model::ModelWeights gemma = LoadCheckpoint("synthetic:gemma-f32");
  w.rope_freqs = gemma.rope_freqs;
  EXPECT_THROW(WriteSafetensors(w, dir), CheckpointError);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// Exports the synthetic llama and returns its folder.
std::string ExportedSyntheticLlama(const std::string& name) {
  std::vector<float> divisors;
  const model::ModelWeights w = SyntheticLlama(divisors);
  std::string dir = testing::ScratchDir(name);
  WriteSafetensors(w, dir);
  return dir;
}

// Another rope_type is refused naming it; the older key `type` is read.
TEST(LlamaRopeScaling, OtherTypesAreRefusedNamingThem) {
  const std::string dir = ExportedSyntheticLlama("llama-rope-types");
  const json good = ReadConfig(dir);
  const std::string expected = model::HashWeights(LoadCheckpoint("safetensors:" + dir));
  json j = good;
  j["rope_scaling"]["rope_type"] = "yarn";
  WriteConfig(dir, j);
  EXPECT_NE(LoadError("safetensors:" + dir).find("rope_type 'yarn'"), std::string::npos)
      << LoadError("safetensors:" + dir);
  j = good;
  j["rope_scaling"].erase("rope_type");
  j["rope_scaling"]["type"] = "llama3";
  WriteConfig(dir, j);
  EXPECT_EQ(model::HashWeights(LoadCheckpoint("safetensors:" + dir)), expected);
  j["rope_scaling"]["type"] = "dynamic";
  WriteConfig(dir, j);
  EXPECT_NE(LoadError("safetensors:" + dir).find("rope_type 'dynamic'"), std::string::npos);
  // transformers 5's key, which the engine does not read, is refused rather
  // than ignored (the scaled model would load unscaled).
  j = good;
  j["rope_parameters"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  WriteConfig(dir, j);
  EXPECT_NE(LoadError("safetensors:" + dir).find("'rope_parameters'"), std::string::npos)
      << LoadError("safetensors:" + dir);
  // A class whose rotary embedding the engine does not model with it.
  j = good;
  j["architectures"] = {"Phi3ForCausalLM"};
  WriteConfig(dir, j);
  EXPECT_NE(LoadError("safetensors:" + dir).find("not Phi3ForCausalLM"), std::string::npos)
      << LoadError("safetensors:" + dir);
}

// A malformed rope_scaling is a CheckpointError naming what is wrong.
TEST(LlamaRopeScaling, MalformedIsAClearError) {
  const std::string dir = ExportedSyntheticLlama("llama-rope-malformed");
  const json good = ReadConfig(dir);
  const auto error_with = [&](const std::function<void(json&)>& change) {
    json j = good;
    change(j["rope_scaling"]);
    WriteConfig(dir, j);
    return LoadError("safetensors:" + dir);
  };
  const std::pair<std::function<void(json&)>, std::string> cases[] = {
      {[](json& s) { s.erase("factor"); }, "rope_scaling lacks 'factor'"},
      {[](json& s) { s.erase("original_max_position_embeddings"); },
       "lacks 'original_max_position_embeddings'"},
      {[](json& s) { s["factor"] = 0.0; }, "'factor' must be positive"},
      {[](json& s) { s["factor"] = -8.0; }, "'factor' must be positive"},
      {[](json& s) { s["factor"] = "8"; }, "'factor' is string, expected a number"},
      {[](json& s) { s["factor"] = 1e300; }, "'factor' is not a finite float32 value"},
      {[](json& s) { s["low_freq_factor"] = 0.0; }, "'low_freq_factor' must be positive"},
      {[](json& s) { s["low_freq_factor"] = 4.0, s["high_freq_factor"] = 1.0; },
       "'high_freq_factor' must exceed 'low_freq_factor'"},
      {[](json& s) { s["low_freq_factor"] = 4.0, s["high_freq_factor"] = 4.0; },
       "'high_freq_factor' must exceed 'low_freq_factor'"},
      {[](json& s) { s["original_max_position_embeddings"] = 64.5; }, "expected an integer"},
      {[](json& s) { s["original_max_position_embeddings"] = 0; }, "out of range"},
      {[](json& s) { s.erase("rope_type"); }, "lacks a 'rope_type' string"},
      {[](json& s) {
         s = json::array({1, 2});
       },
       "'rope_scaling' is not an object"},
  };
  // A head_dim the tensors do not have is refused before the divisors
  // (sized by it) are computed.
  json huge = good;
  huge["head_dim"] = 1 << 28;
  WriteConfig(dir, huge);
  EXPECT_NE(LoadError("safetensors:" + dir).find("q_proj.weight is missing or does not have"),
            std::string::npos)
      << LoadError("safetensors:" + dir);
  for (const auto& [change, message] : cases) {
    const std::string e = error_with(change);
    EXPECT_NE(e.find(message), std::string::npos) << "expected '" << message << "' in: " << e;
    EXPECT_EQ(e.rfind(dir, 0), 0u) << e;  // names the checkpoint
  }
}

// The layout key: an unknown value, or one that contradicts the rotation
// stated beside it, is refused.
TEST(LlamaExport, ContradictoryLayoutIsRefused) {
  const std::string dir = ExportedSyntheticLlama("llama-layout-keys");
  json j = ReadConfig(dir);
  j["samebits_qk_layout"] = "sideways";
  WriteConfig(dir, j);
  EXPECT_NE(LoadError("safetensors:" + dir).find("samebits_qk_layout is 'sideways'"),
            std::string::npos);
  j["samebits_qk_layout"] = "unpermuted";
  j["samebits_rope_style"] = "interleaved";
  WriteConfig(dir, j);
  EXPECT_NE(LoadError("safetensors:" + dir).find("samebits_rope_style is 'interleaved'"),
            std::string::npos);
  j["samebits_qk_layout"] = 3;
  WriteConfig(dir, j);
  EXPECT_NE(LoadError("safetensors:" + dir).find("'samebits_qk_layout' is number"),
            std::string::npos);
}

// Exports from before the layout key (llama.cpp's permuted rows with
// samebits_rope_style "interleaved") load as they did.
TEST(LlamaExport, OldInterleavedExportsStillLoad) {
  std::vector<float> divisors;
  model::ModelWeights w = SyntheticLlama(divisors);
  w.config.rope_freq_factors = false;  // old exports could not hold rope_freqs
  w.rope_freqs = {};
  // Permuting first makes the writer's unpermuting give back the GGUF rows.
  model::ModelWeights twice = w;
  std::vector<std::vector<std::byte>> buffers;
  const auto permute = [&](model::TensorView& v, int64_t heads) {
    std::vector<std::byte> rows(v.bytes());
    PermuteHeadRows({v.data, v.bytes()}, rows, heads, 16, 16,
                    v.bytes() / static_cast<size_t>(v.shape[0]), QkRows::kToGguf);
    buffers.push_back(std::move(rows));
    v.data = buffers.back().data();
  };
  buffers.reserve(4 * twice.layers.size());
  for (auto& l : twice.layers) {
    permute(l.wq, w.config.n_heads);
    permute(l.wk, w.config.n_kv_heads);
    permute(l.q_norm, 1);
    permute(l.k_norm, 1);
  }
  const std::string dir = testing::ScratchDir("llama-export-old");
  WriteSafetensors(twice, dir);
  json j = ReadConfig(dir);
  j.erase("samebits_qk_layout");
  j["samebits_rope_style"] = "interleaved";
  WriteConfig(dir, j);
  testing::ExpectSameModel(w, LoadCheckpoint("safetensors:" + dir));
}

// transformers' reading of the export (no samebits_* keys: rotate_half on
// the unpermuted rows, rope_scaling's divisors) is the same model: other
// reduction orders, so not the same bits, but the same greedy tokens and
// logits within float rounding.
TEST(LlamaExport, TransformersReadingIsTheSameModel) {
  SKIP_WITHOUT_CHECKPOINTS();
  const model::ModelWeights w =
      LoadCheckpoint("gguf:" + testing::Checkpoint("tiny_dense_llama3_f32.gguf"));
  const std::string dir = testing::ScratchDir("llama-export-hf");
  WriteSafetensors(w, dir);
  json j = ReadConfig(dir);
  for (auto it = j.begin(); it != j.end();)
    it = it.key().rfind("samebits_", 0) == 0 ? j.erase(it) : std::next(it);
  WriteConfig(dir, j);
  const model::ModelWeights hf = LoadCheckpoint("safetensors:" + dir);
  EXPECT_EQ(hf.config.rope_style, model::RopeStyle::kNeox);
  EXPECT_TRUE(hf.config.rope_freq_factors);
  const auto a = testing::ReferenceLogits(w, Prompt48());
  const auto b = testing::ReferenceLogits(hf, Prompt48());
  double max_diff = 0.0, max_abs = 0.0;
  for (size_t p = 0; p < a.size(); ++p) {
    const auto arg = [](const std::vector<float>& v) {
      return std::max_element(v.begin(), v.end()) - v.begin();
    };
    EXPECT_EQ(arg(a[p]), arg(b[p])) << "position " << p;
    for (size_t i = 0; i < a[p].size(); ++i) {
      max_diff = std::max(max_diff, double{std::fabs(a[p][i] - b[p][i])});
      max_abs = std::max(max_abs, double{std::fabs(a[p][i])});
    }
  }
  std::cout << "[transformers reading] max |difference| " << max_diff << " of logits up to "
            << max_abs << "\n";
  EXPECT_LE(max_diff, 1e-4 * max_abs);
}

}  // namespace
}  // namespace samebits::formats
