// The tuning knobs' list (engine/model/tuning.h): what `tune` tries is
// within what the flags accept, today's defaults are among the candidates,
// names and flags are unique, and a value outside a knob's range or a knob
// that does not exist is refused. That every value gives the same bits is
// forward_cpu_test.cc's (odd chunks, tiles and row blocks against the
// reference, memcmp).
#include "engine/model/tuning.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "engine/model/synthetic.h"

namespace samebits::model {
namespace {

TEST(TuningKnobs, EachIsNamedOnceAndItsCandidatesFitItsRange) {
  const CpuOptions defaults;
  std::set<std::string_view> names, flags;
  ASSERT_FALSE(TuningKnobs().empty());
  for (const TuningKnob& k : TuningKnobs()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_TRUE(flags.insert(k.flag).second) << k.flag;
    EXPECT_EQ(k.flag.substr(0, 2), "--") << k.flag;
    EXPECT_EQ(FindTuningKnob(k.name), &k);
    ASSERT_GE(k.candidates.size(), 2u) << k.name;
    for (int64_t v : k.candidates) {
      EXPECT_GE(v, k.min) << k.name;
      EXPECT_LE(v, k.max) << k.name;
    }
    const int64_t d = defaults.*k.field;
    EXPECT_NE(std::find(k.candidates.begin(), k.candidates.end(), d), k.candidates.end())
        << k.name << "'s default " << d << " is not among the values tune tries";
  }
  EXPECT_EQ(FindTuningKnob("no_such_knob"), nullptr);
}

TEST(TuningKnobs, ApplyingSetsTheNamedKnobsAndRefusesTheRest) {
  CpuOptions o;
  ApplyKnobs({{"gemm_tile_m", 3}, {"gemv_chunk_bytes", 8192}}, o);
  EXPECT_EQ(o.gemm_tile_m, 3);
  EXPECT_EQ(o.gemv_chunk_bytes, 8192);
  EXPECT_EQ(o.gemm_tile_n, CpuOptions().gemm_tile_n);
  const KnobValues all = KnobsOf(o);
  EXPECT_EQ(all.size(), TuningKnobs().size());
  EXPECT_EQ(all.at("gemm_tile_m"), 3);
  EXPECT_THROW(ApplyKnobs({{"gemm_tile_m", 0}}, o), std::invalid_argument);
  EXPECT_THROW(ApplyKnobs({{"gemm_tile_m", 4097}}, o), std::invalid_argument);
  EXPECT_THROW(ApplyKnobs({{"prefetch", 1}}, o), std::invalid_argument);
  EXPECT_EQ(o.gemm_tile_m, 3);  // a refused value changes nothing
}

TEST(TuningKnobs, TheWeightTypeIsTheOneMostMatrixBytesAreIn) {
  EXPECT_EQ(DominantWeightType(MakeSyntheticWeights("tiny", DType::kF32)), "f32");
  EXPECT_EQ(DominantWeightType(MakeSyntheticWeights("tiny", DType::kBF16)), "bf16");
  EXPECT_EQ(DominantWeightType(MakeSyntheticWeights("gemma", DType::kF16)), "f16");
  EXPECT_EQ(DominantWeightType(ModelWeights{}), "none");
}

}  // namespace
}  // namespace samebits::model
