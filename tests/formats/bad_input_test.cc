// Untrusted input: truncated files, lying counts and offsets, wrong types.
// Every case must end in a CheckpointError that names the file, never in a
// crash, a hang or a read outside the bytes (run under valgrind or ASan to
// see the last).
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <filesystem>

#include "engine/formats/architectures.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf.h"
#include "engine/formats/gguf_config.h"
#include "engine/formats/gguf_writer.h"
#include "engine/formats/llama2c.h"
#include "engine/formats/safetensors.h"
#include "engine/formats/vocabulary.h"
#include "tests/formats/formats_test_helpers.h"

namespace samebits::formats {
namespace {

// Loads a copy of exactly `n` bytes (so that a read past them is a heap
// overrun the tools can see) and returns the error message, or "" when it loaded.
template <typename Load>
std::string ErrorOf(const std::vector<std::byte>& bytes, size_t n, Load load) {
  std::vector<std::byte> copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
  try {
    load(copy);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

auto LoadGguf = [](const std::vector<std::byte>& b) { LoadGgufBytes(b, nullptr, "bad.gguf"); };
auto LoadBin = [](const std::vector<std::byte>& b) { LoadLlama2cBytes(b, nullptr, "bad.bin"); };
auto LoadTok = [](const std::vector<std::byte>& b) {
  ParseTokenizerBin(b, "bad-tokenizer.bin", 32000);
};

// A GGUF assembled field by field, for precise lies.
struct Gguf {
  std::vector<std::byte> b;
  void U8(uint8_t v) { b.push_back(std::byte{v}); }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) U8(uint8_t(v >> (8 * i)));
  }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) U8(uint8_t(v >> (8 * i)));
  }
  void Str(const std::string& s) {
    U64(s.size());
    for (char c : s) U8(uint8_t(c));
  }
  void KvU32(const std::string& k, uint32_t v) {
    Str(k);
    U32(4);
    U32(v);
  }
  void KvF32(const std::string& k, float v) {
    Str(k);
    U32(6);
    U32(std::bit_cast<uint32_t>(v));
  }
  void KvStr(const std::string& k, const std::string& v) {
    Str(k);
    U32(8);
    Str(v);
  }
  void Pad() {
    while (b.size() % 32) U8(0);
  }
};

// Returns a valid tiny llama GGUF (vocab 4, d 2, 1 layer, 1 head, ffn 2),
// with hooks that let a test replace one piece.
struct TinyOptions {
  uint32_t version = 3;
  std::string magic = "GGUF";
  std::string arch = "llama";
  bool block_count_as_string = false;
  bool omit_heads = false;
  uint32_t q_type = 0;  // ggml type of attn_q
  uint64_t q_offset_extra = 0;
  uint64_t q_dim0 = 2;
};

std::vector<std::byte> TinyGguf(const TinyOptions& o = {}) {
  struct T {
    std::string name;
    std::vector<uint64_t> ne;
  };
  const std::vector<T> tensors = {{"token_embd.weight", {2, 4}},
                                  {"blk.0.attn_norm.weight", {2}},
                                  {"blk.0.attn_q.weight", {o.q_dim0, 2}},
                                  {"blk.0.attn_k.weight", {2, 2}},
                                  {"blk.0.attn_v.weight", {2, 2}},
                                  {"blk.0.attn_output.weight", {2, 2}},
                                  {"blk.0.ffn_norm.weight", {2}},
                                  {"blk.0.ffn_gate.weight", {2, 2}},
                                  {"blk.0.ffn_up.weight", {2, 2}},
                                  {"blk.0.ffn_down.weight", {2, 2}},
                                  {"output_norm.weight", {2}}};
  Gguf g;
  for (char c : o.magic) g.U8(uint8_t(c));
  g.U32(o.version);
  g.U64(tensors.size());
  g.U64(o.omit_heads ? 6 : 7);
  g.KvStr("general.architecture", o.arch);
  if (o.block_count_as_string)
    g.KvStr(o.arch + ".block_count", "1");
  else
    g.KvU32(o.arch + ".block_count", 1);
  g.KvU32(o.arch + ".embedding_length", 2);
  if (!o.omit_heads) g.KvU32(o.arch + ".attention.head_count", 1);
  g.KvU32(o.arch + ".feed_forward_length", 2);
  g.KvF32(o.arch + ".attention.layer_norm_rms_epsilon", 1e-5f);
  g.KvF32(o.arch + ".attention.layer_norm_epsilon", 1e-5f);  // read by LayerNorm architectures
  uint64_t offset = 0;
  for (const T& t : tensors) {
    g.Str(t.name);
    g.U32(uint32_t(t.ne.size()));
    uint64_t n = 1;
    for (uint64_t d : t.ne) {
      g.U64(d);
      n *= d;
    }
    const bool q = t.name == "blk.0.attn_q.weight";
    g.U32(q ? o.q_type : 0);
    g.U64(offset + (q ? o.q_offset_extra : 0));
    offset += (n * 4 + 31) / 32 * 32;
  }
  g.Pad();
  for (uint64_t i = 0; i < offset / 4; ++i) g.U32(std::bit_cast<uint32_t>(0.25f));
  return g.b;
}

TEST(BadGguf, TheValidTinyFileLoads) {
  const auto bytes = TinyGguf();
  EXPECT_EQ(ErrorOf(bytes, bytes.size(), LoadGguf), "");
  // Version 2 has the same layout (64-bit counts) and loads too.
  const auto v2 = TinyGguf({.version = 2});
  EXPECT_EQ(ErrorOf(v2, v2.size(), LoadGguf), "");
}

TEST(BadGguf, EveryTruncationIsAClearError) {
  const auto bytes = TinyGguf();
  // The file may end anywhere after the last tensor's bytes (the padding
  // after it is optional); any shorter prefix must be refused.
  const GgufFile f = ParseGguf(bytes, "tiny.gguf");
  const size_t needed = f.data_offset + f.tensors.back().offset + f.tensors.back().nbytes;
  EXPECT_EQ(ErrorOf(bytes, needed, LoadGguf), "");
  for (size_t n = 0; n < needed; ++n) {
    const std::string e = ErrorOf(bytes, n, LoadGguf);
    ASSERT_NE(e, "") << "a prefix of " << n << " bytes loaded";
    ASSERT_EQ(e.rfind("bad.gguf: ", 0), 0u) << e;
  }
}

TEST(BadGguf, TruncatedRealFile) {
  SKIP_WITHOUT_CHECKPOINTS();
  const auto bytes = testing::ReadBytes(testing::Checkpoint("tiny_moe_mixtral_bf16.gguf"));
  for (size_t n = 0; n < bytes.size(); n += (n < 16384 ? 7 : 4093)) {
    ASSERT_NE(ErrorOf(bytes, n, LoadGguf), "") << n;
  }
}

// Returns the error of loading `bytes`, expecting one that mentions `needle`.
void ExpectError(const std::vector<std::byte>& bytes, const std::string& needle) {
  const std::string e = ErrorOf(bytes, bytes.size(), LoadGguf);
  EXPECT_NE(e.find(needle), std::string::npos) << "error '" << e << "' lacks '" << needle << "'";
  EXPECT_EQ(e.rfind("bad.gguf: ", 0), 0u) << e;
}

TEST(BadGguf, HeaderLies) {
  ExpectError(TinyGguf({.magic = "GGML"}), "not a GGUF file");
  ExpectError(TinyGguf({.version = 1}), "version 1 is not supported");
  ExpectError(TinyGguf({.version = 7}), "unsupported GGUF version 7");
  auto huge_tensors = TinyGguf();
  for (int i = 0; i < 8; ++i) huge_tensors[8 + i] = std::byte{0xff};
  ExpectError(huge_tensors, "tensor count");
  auto huge_kv = TinyGguf();
  huge_kv[16 + 7] = std::byte{0x40};
  ExpectError(huge_kv, "metadata count");
  auto long_key = TinyGguf();
  long_key[24 + 6] = std::byte{0x7f};  // the first key's length
  ExpectError(long_key, "declares");
}

TEST(BadGguf, MetadataLies) {
  ExpectError(TinyGguf({.arch = "gpt2"}), "architecture 'gpt2' is not supported");
  ExpectError(TinyGguf({.block_count_as_string = true}),
              "'llama.block_count' has type string, expected an integer");
  ExpectError(TinyGguf({.omit_heads = true}), "'llama.attention.head_count' is missing");
}

// Every entry of the architecture table loads, and the configuration gets
// the entry's switches; a name the table lacks is refused listing them all.
TEST(GgufArchitectures, EachEntryLoadsWithItsSwitches) {
  for (const GgufArchitecture& a : kGgufArchitectures) {
    SCOPED_TRACE(a.name);
    const auto bytes = TinyGguf({.arch = a.name});
    const model::ModelConfig c = GgufToConfig(ParseGguf(bytes, "tiny.gguf"));
    EXPECT_EQ(c.arch, a.name);
    EXPECT_EQ(c.rope_style, a.rope_style);
    EXPECT_EQ(c.qk_norm, a.qk_norm);
    EXPECT_EQ(c.qkv_bias, a.qkv_bias);
    EXPECT_EQ(c.norm, a.norm);
    EXPECT_EQ(c.parallel_block, a.parallel_block);
    EXPECT_EQ(c.post_norms, a.gemma_block);
    EXPECT_EQ(c.activation == model::Activation::kGeluTanh, a.gemma_block);
  }
  const auto unknown = TinyGguf({.arch = "gpt2"});
  const std::string error = ErrorOf(unknown, unknown.size(), LoadGguf);
  for (const GgufArchitecture& a : kGgufArchitectures) {
    EXPECT_NE(error.find(a.name), std::string::npos) << error;
  }
  EXPECT_NE(error.find("(supported: " + KnownGgufArchitectures() + ")"), std::string::npos)
      << error;
}

// A NUL inside a string of the file used to end the message there (what()
// stops at the first NUL); the string is quoted whole, escaped.
TEST(BadGguf, AStringWithANulIsQuotedWhole) {
  ExpectError(TinyGguf({.arch = std::string("gp\0t2\x1b", 6)}),
              "architecture 'gp\\x00t2\\x1b' is not supported");
}

TEST(BadGguf, TensorLies) {
  ExpectError(TinyGguf({.q_type = 16}), "type IQ2_XXS, which is not supported");
  ExpectError(TinyGguf({.q_type = 10}), "type Q2_K, which is not supported");
  // Quantized: rows must be whole blocks, and the blocks must be in the file.
  ExpectError(TinyGguf({.q_type = 2}),
              "has type Q4_0 but its rows hold 2 weights, not a multiple of the 32-weight block");
  ExpectError(
      TinyGguf({.q_type = 12, .q_dim0 = 100}),
      "has type Q4_K but its rows hold 100 weights, not a multiple of the 256-weight block");
  // Whole Q8_0 blocks inside the file pass the parser; the shape check follows.
  ExpectError(TinyGguf({.q_type = 8, .q_dim0 = 32}), "has shape [2, 32], but the configuration");
  ExpectError(TinyGguf({.q_type = 8, .q_dim0 = uint64_t{1} << 62}), "is too large");
  ExpectError(TinyGguf({.q_type = 999}), "'blk.0.attn_q.weight' has type 999 (unknown), which");
  ExpectError(TinyGguf({.q_type = 4}), "has type 4 (unknown), which");
  ExpectError(TinyGguf({.q_offset_extra = 4}), "not a multiple of the alignment");
  ExpectError(TinyGguf({.q_offset_extra = 1u << 20}), "extends past the end");
  ExpectError(TinyGguf({.q_dim0 = 3}), "has shape [2, 3], but the configuration implies [2, 2]");
  ExpectError(TinyGguf({.q_dim0 = 0}), "dimension 0 of 0");
  ExpectError(TinyGguf({.q_dim0 = uint64_t{1} << 62}), "overflows");
}

TEST(BadLlama2c, TruncationsAndLies) {
  SKIP_WITHOUT_CHECKPOINTS();
  const auto bytes = testing::ReadBytes(testing::Checkpoint("stories260K.bin"));
  EXPECT_EQ(ErrorOf(bytes, bytes.size(), LoadBin), "");
  for (size_t n = 0; n < 1036316; n += (n < 64 ? 1 : 9973)) {
    const std::string e = ErrorOf(bytes, n, LoadBin);
    ASSERT_EQ(e.rfind("bad.bin: ", 0), 0u) << n << ": " << e;
  }
  auto patch = [&](int field, int32_t v) {
    auto b = bytes;
    std::memcpy(b.data() + 4 * static_cast<size_t>(field), &v, 4);
    return ErrorOf(b, b.size(), LoadBin);
  };
  EXPECT_NE(patch(0, -64).find("dim is -64"), std::string::npos);
  EXPECT_NE(patch(2, 0x7fffffff).find("n_layers"), std::string::npos);
  EXPECT_NE(patch(3, 7).find("not a multiple of n_heads"), std::string::npos);
  EXPECT_NE(patch(5, 0x7fffffff).find("file ends inside tensor 'token_embd.weight'"),
            std::string::npos);
  EXPECT_NE(patch(5, -512).find("file ends inside tensor 'output.weight'"), std::string::npos);
}

TEST(BadTokenizerBin, TruncationsAndLies) {
  SKIP_WITHOUT_CHECKPOINTS();
  const auto bytes = testing::ReadBytes(testing::Checkpoint("tokenizer.bin"));
  EXPECT_EQ(ErrorOf(bytes, bytes.size(), LoadTok), "");
  for (size_t n = 0; n < bytes.size(); n += (n < 256 ? 1 : 977)) {
    ASSERT_NE(ErrorOf(bytes, n, LoadTok), "") << n;
  }
  auto b = bytes;
  const int32_t minus = -5;
  std::memcpy(b.data() + 8, &minus, 4);  // the first piece's length
  EXPECT_NE(ErrorOf(b, b.size(), LoadTok).find("has length -5"), std::string::npos);
}

TEST(BadSafetensors, HeaderAndOffsetLies) {
  const std::string dir = testing::ScratchDir("bad-st");
  WriteSafetensors(LoadCheckpoint("synthetic:tiny"), dir);
  const auto good = testing::ReadBytes(dir + "/model.safetensors");
  auto parse = [](const std::vector<std::byte>& b) {
    TensorTable t;
    ParseSafetensors(b, "bad.safetensors", t);
  };
  EXPECT_EQ(ErrorOf(good, good.size(), parse), "");
  uint64_t header_len = 0;
  std::memcpy(&header_len, good.data(), 8);
  for (size_t n = 0; n < 8 + header_len; n += 3) ASSERT_NE(ErrorOf(good, n, parse), "") << n;
  auto with_header = [&](const std::string& json) {
    std::vector<std::byte> b(8 + json.size());
    const uint64_t n = json.size();
    std::memcpy(b.data(), &n, 8);
    std::memcpy(b.data() + 8, json.data(), json.size());
    b.resize(b.size() + 16);
    return ErrorOf(b, b.size(), parse);
  };
  EXPECT_NE(with_header("{not json").find("not valid JSON"), std::string::npos);
  EXPECT_NE(
      with_header(R"({"a":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}})").find("dtype 'I8'"),
      std::string::npos);
  EXPECT_NE(with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})").find("need 8"),
            std::string::npos);
  EXPECT_NE(
      with_header(R"({"a":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})").find("outside"),
      std::string::npos);
  EXPECT_NE(
      with_header(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})").find("dimension"),
      std::string::npos);
  EXPECT_NE(
      with_header(R"({"a":{"dtype":"F32","shape":[4611686018427387904, 8],"data_offsets":[0,4]}})")
          .find("overflows"),
      std::string::npos);
  EXPECT_NE(with_header(R"([1,2])").find("not a JSON object"), std::string::npos);
  auto huge = good;
  const uint64_t lie = ~uint64_t{0};
  std::memcpy(huge.data(), &lie, 8);
  EXPECT_NE(ErrorOf(huge, huge.size(), parse).find("exceeds"), std::string::npos);
}

TEST(BadSpec, UnknownAndMissing) {
  EXPECT_THROW(LoadCheckpoint("gguf:/nonexistent/x.gguf"), CheckpointError);
  EXPECT_THROW(LoadCheckpoint("/nonexistent/x"), CheckpointError);
  EXPECT_THROW(LoadCheckpoint("safetensors:/nonexistent"), CheckpointError);
  EXPECT_THROW(LoadCheckpoint(""), CheckpointError);
}

}  // namespace
}  // namespace samebits::formats
