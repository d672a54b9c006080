// Synthetic checkpoints: the generator's output is pinned by stored hashes,
// is reproducible, depends on the seed, and has sane values.
#include "engine/model/synthetic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine/model/tensor_spec.h"
#include "engine/numerics/half.h"

namespace samebits::model {
namespace {

// These hashes PIN THE GENERATOR: they were produced once by this code
// (HashWeights of MakeSyntheticWeights with kSyntheticSeed) and committed.
// They are not computed independently; they exist so that any change to the
// generator, the shapes or the tensor list is noticed, since every stored
// logit reference of a synthetic checkpoint depends on these bits. A
// deliberate change updates them together with the references.
struct Pinned {
  const char* name;
  DType dtype;
  const char* hash;
  int64_t parameters;
};
constexpr Pinned kPinned[] = {
    {"tiny", DType::kBF16, "8d67e3c1e65c42a7", 168832},
    {"tiny", DType::kF32, "c47567f96a7674a3", 168832},
    {"tiny", DType::kF16, "cd52f8062f6fbb5d", 168832},
    {"medium", DType::kBF16, "cff45e0bdd4987c3", 6824448},
    {"medium", DType::kF16, "7a504037f7a8f361", 6824448},
    {"wide", DType::kBF16, "9dd9417dd4f565b6", 88364032},
    // `bench` takes about a second to generate on a busy 2-core machine.
    {"bench", DType::kBF16, "370d729c4d523ad0", 287918080},
};

TEST(SyntheticTest, PinnedWeightHashes) {
  for (const Pinned& p : kPinned) {
    const ModelWeights w = MakeSyntheticWeights(p.name, p.dtype);
    EXPECT_EQ(HashWeights(w), p.hash) << p.name << "-" << numerics::DTypeName(p.dtype);
    EXPECT_EQ(CountParameters(w), p.parameters) << p.name;
  }
}

TEST(SyntheticTest, BenchHasTheQwen3MoeShape) {
  const ModelConfig c = SyntheticConfig("bench");
  // 288M: two 32000 x 1024 matrices plus 8 layers of attention and experts.
  const int64_t layer =
      2 * 1024 + 2 * 1024 * 1024 + 2 * 256 * 1024 + 2 * 64 + 8 * 1024 + 3 * 8 * 1024 * 1024;
  EXPECT_EQ(2 * 32000 * 1024 + 8 * layer + 1024, 287918080);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_EQ(c.rope_style, RopeStyle::kNeox);
  EXPECT_EQ(c.rope_base, 1e6f);
  EXPECT_FALSE(c.tied_output);
}

TEST(SyntheticTest, TwoGenerationsAgree) {
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    const ModelWeights a = MakeSyntheticWeights("medium", dtype);
    const ModelWeights b = MakeSyntheticWeights("medium", dtype);
    EXPECT_EQ(HashWeights(a), HashWeights(b));
    ASSERT_EQ(a.layers[2].expert_down.bytes(), b.layers[2].expert_down.bytes());
    EXPECT_EQ(std::memcmp(a.layers[2].expert_down.data, b.layers[2].expert_down.data,
                          a.layers[2].expert_down.bytes()),
              0);
  }
}

TEST(SyntheticTest, TheSeedChangesEveryTensor) {
  const ModelWeights a = MakeSyntheticWeights("tiny", DType::kBF16, kSyntheticSeed);
  const ModelWeights b = MakeSyntheticWeights("tiny", DType::kBF16, kSyntheticSeed + 1);
  EXPECT_NE(HashWeights(a), HashWeights(b));
  ModelWeights& ma = const_cast<ModelWeights&>(a);
  ModelWeights& mb = const_cast<ModelWeights&>(b);
  ForEachTensor(a.config, [&](const TensorSpec& s) {
    EXPECT_NE(std::memcmp(s.slot(ma).data, s.slot(mb).data, s.slot(ma).bytes()), 0) << s.name;
  });
}

// The dtype only rounds: each BF16/F16 element is the RNE rounding of the
// F32 checkpoint's element.
TEST(SyntheticTest, NarrowDtypesAreRoundedF32Values) {
  const ModelWeights f32 = MakeSyntheticWeights("tiny", DType::kF32);
  const ModelWeights bf16 = MakeSyntheticWeights("tiny", DType::kBF16);
  const ModelWeights f16 = MakeSyntheticWeights("tiny", DType::kF16);
  const TensorView& a = f32.layers[1].expert_up;
  const auto* b = reinterpret_cast<const numerics::BF16*>(bf16.layers[1].expert_up.data);
  const auto* h = reinterpret_cast<const numerics::F16*>(f16.layers[1].expert_up.data);
  for (int64_t i = 0; i < a.elements(); ++i) {
    ASSERT_EQ(numerics::ToBF16(a.At(i)).bits, b[i].bits) << i;
    ASSERT_EQ(numerics::ToF16(a.At(i)).bits, h[i].bits) << i;
  }
  // Norms and the router stay F32 and are identical across dtypes.
  EXPECT_EQ(std::memcmp(f32.layers[0].router.data, bf16.layers[0].router.data,
                        f32.layers[0].router.bytes()),
            0);
}

TEST(SyntheticTest, ValuesAreFiniteAndScaled) {
  ModelWeights w = MakeSyntheticWeights("medium", DType::kF32);
  ForEachTensor(w.config, [&](const TensorSpec& s) {
    const TensorView& v = s.slot(w);
    float lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < v.elements(); ++i) {
      lo = std::min(lo, v.At(i));
      hi = std::max(hi, v.At(i));
    }
    if (s.kind == TensorKind::kNorm && s.name.ends_with(".weight")) {
      EXPECT_GE(lo, 0.75f) << s.name;
      EXPECT_LT(hi, 1.25f) << s.name;
    } else {
      const float bound = s.kind == TensorKind::kRouter ? 4.0f * std::sqrt(3.0f / s.shape.back())
                          : s.kind == TensorKind::kNorm ? 0.125f
                                                        : std::sqrt(3.0f / s.shape.back());
      EXPECT_GE(lo, -bound) << s.name;
      EXPECT_LE(hi, bound) << s.name;
      EXPECT_LT(lo, 0.0f) << s.name;  // both signs occur
      EXPECT_GT(hi, 0.0f) << s.name;
    }
  });
}

TEST(SyntheticTest, UnknownNameThrows) {
  EXPECT_THROW(MakeSyntheticWeights("huge", DType::kBF16), std::invalid_argument);
}

}  // namespace
}  // namespace samebits::model
