// Phi-3's fused tensors (engine/formats/tensor_table.h): `attn_qkv` is read
// as views of its q, k and v rows, an `ffn_up` of twice the FFN width as
// the gate's rows then the up's, without copying; a fused tensor of the
// wrong height, or one beside its own parts, is refused naming it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/formats/checkpoint.h"
#include "engine/formats/tensor_table.h"
#include "engine/model/tensor_spec.h"

namespace samebits::formats {
namespace {

model::ModelConfig DenseConfig() {
  model::ModelConfig c;
  c.name = "fused";
  c.arch = "phi3";
  c.vocab_size = 8;
  c.d_model = 4;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.head_dim = 2;
  c.ffn_dim = 3;
  c.layers.resize(1);
  return c;
}

// A table holding every tensor of `c` as F32 rows of distinct values, with
// layer 0's q/k/v and gate/up fused as Phi-3 writes them.
struct FusedFile {
  std::vector<std::vector<float>> data;
  TensorTable table;
  void Add(const std::string& name, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.emplace_back(n);
    for (int64_t i = 0; i < n; ++i) data.back()[i] = static_cast<float>(data.size() * 1000 + i);
    FileTensor t;
    t.shape = std::move(shape);
    t.data = reinterpret_cast<const std::byte*>(data.back().data());
    table[name] = t;
  }
};

FusedFile MakeFile(const model::ModelConfig& c, int64_t qkv_rows) {
  FusedFile f;
  f.data.reserve(64);  // the views point into these vectors
  model::ForEachTensor(c, [&](const model::TensorSpec& s) {
    if (s.name.find("attn_q.") != std::string::npos ||
        s.name.find("attn_k.") != std::string::npos ||
        s.name.find("attn_v.") != std::string::npos ||
        s.name.find("ffn_gate.") != std::string::npos ||
        s.name.find("ffn_up.") != std::string::npos) {
      return;
    }
    f.Add(s.name, s.shape);
  });
  f.Add("blk.0.attn_qkv.weight", {qkv_rows, c.d_model});
  f.Add("blk.0.ffn_up.weight", {2 * int64_t{c.ffn_dim}, c.d_model});
  return f;
}

TEST(FusedTensors, PartsAreRowViewsOfTheFusedTensor) {
  const model::ModelConfig c = DenseConfig();
  FusedFile f = MakeFile(c, 4 + 2 + 2);
  const float* qkv = f.data[f.data.size() - 2].data();
  const float* up = f.data.back().data();
  const model::ModelWeights w =
      BindTensors(c, f.table, "fused.gguf", std::make_shared<LoadedStorage>());
  const model::LayerWeights& l = w.layers[0];
  EXPECT_EQ(reinterpret_cast<const float*>(l.wq.data), qkv);
  EXPECT_EQ(reinterpret_cast<const float*>(l.wk.data), qkv + 4 * 4);
  EXPECT_EQ(reinterpret_cast<const float*>(l.wv.data), qkv + 6 * 4);
  EXPECT_EQ(l.wv.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(reinterpret_cast<const float*>(l.ffn_gate.data), up);
  EXPECT_EQ(reinterpret_cast<const float*>(l.ffn_up.data), up + 3 * 4);
  EXPECT_EQ(l.ffn_up.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(l.ffn_up.At(0), up[12]);
}

TEST(FusedTensors, AWrongHeightIsRefusedNamingTheTensor) {
  const model::ModelConfig c = DenseConfig();
  FusedFile f = MakeFile(c, 9);
  try {
    BindTensors(c, f.table, "fused.gguf", std::make_shared<LoadedStorage>());
    FAIL() << "a 9-row attn_qkv was accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("fused.gguf: fused tensor 'blk.0.attn_qkv.weight' has "
                                         "shape [9, 4], expected [4 + 2 + 2 rows, 4]"),
              std::string::npos)
        << e.what();
  }
}

TEST(FusedTensors, BothFormsAtOnceAreRefused) {
  const model::ModelConfig c = DenseConfig();
  FusedFile f = MakeFile(c, 8);
  f.Add("blk.0.attn_k.weight", {2, 4});
  try {
    BindTensors(c, f.table, "fused.gguf", std::make_shared<LoadedStorage>());
    FAIL() << "attn_qkv beside attn_k was accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("'blk.0.attn_qkv.weight' and 'blk.0.attn_k.weight' are "
                                         "both present"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace samebits::formats
