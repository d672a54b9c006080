// A quantized checkpoint exported as safetensors (which has no block types)
// is written as the F32 values of its blocks: reloaded, it gives the
// quantized model's logits bit for bit.
#include <gtest/gtest.h>

#include <string>

#include "engine/formats/checkpoint.h"
#include "engine/formats/safetensors.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/synthetic.h"
#include "tests/formats/formats_test_helpers.h"

namespace samebits::formats {
namespace {

TEST(QuantizedSafetensors, WrittenAsTheirF32Values) {
  model::WeightType type;
  ASSERT_TRUE(model::ParseWeightType("q8_0", &type));
  const model::ModelWeights q =
      model::ConvertWeights(model::MakeSyntheticWeights("tiny", model::DType::kF32), type, nullptr);
  ASSERT_TRUE(q.layers[0].wq.quantized);
  const std::string dir = testing::ScratchDir("quantized_safetensors");
  WriteSafetensors(q, dir, 1);
  const model::ModelWeights back = LoadCheckpoint("safetensors:" + dir);
  EXPECT_FALSE(back.layers[0].wq.quantized);
  EXPECT_EQ(back.layers[0].wq.dtype, model::DType::kF32);
  const auto tokens = testing::LlamaCppTokens(q.config.vocab_size);
  EXPECT_TRUE(testing::SameBits(testing::ReferenceLogits(q, tokens),
                                testing::ReferenceLogits(back, tokens)));
}

}  // namespace
}  // namespace samebits::formats
