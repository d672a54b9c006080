// The cache of synthesised checkpoints (engine/formats/synthetic_cache.h):
// a cached load gives the same configuration and the same weights (by their
// hash) as synthesis, is used only when it checks, and a damaged or foreign
// file is a miss that synthesis replaces, never an error or other weights.
#include "engine/formats/synthetic_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "engine/formats/checkpoint.h"
#include "engine/model/synthetic.h"
#include "engine/model/tensor_spec.h"

namespace samebits::formats {
namespace {

class SyntheticCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "cache-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

// Loads `spec` through the cache, counting syntheses.
model::ModelWeights Load(const std::string& spec, const std::string& dir, int* syntheses) {
  const model::ModelWeights direct = LoadCheckpoint(spec);
  const std::string name = spec.substr(std::string("synthetic:").size());
  const std::string shape =
      name.substr(0, name.rfind('-') == std::string::npos ? name.size() : name.rfind('-'));
  return LoadSyntheticCached(spec, model::SyntheticConfig(shape), dir, [&] {
    ++*syntheses;
    return direct;
  });
}

TEST_F(SyntheticCacheTest, ACachedLoadGivesTheSynthesisedWeightsForEveryKindOfTensor) {
  for (const std::string spec : {"synthetic:tiny", "synthetic:tiny-f32", "synthetic:medium-q4_k",
                                 "synthetic:tiny-q5_1", "synthetic:gemma"}) {
    const model::ModelWeights direct = LoadCheckpoint(spec);
    int syntheses = 0;
    const model::ModelWeights first = Load(spec, dir_, &syntheses);
    EXPECT_EQ(syntheses, 1) << spec << ": the first load synthesises";
    ASSERT_TRUE(std::filesystem::exists(SyntheticCachePath(spec, dir_))) << spec;
    const model::ModelWeights second = Load(spec, dir_, &syntheses);
    EXPECT_EQ(syntheses, 1) << spec << ": the second load reads the file";
    EXPECT_EQ(second.config, direct.config) << spec;
    EXPECT_EQ(model::HashWeights(second), model::HashWeights(direct)) << spec;
    // Through the spec, as `run` loads it.
    const model::ModelWeights by_spec = LoadCheckpoint(spec, dir_);
    EXPECT_EQ(model::HashWeights(by_spec), model::HashWeights(direct)) << spec;
  }
}

TEST_F(SyntheticCacheTest, ADamagedOrForeignFileIsAMissNeverOtherWeights) {
  const std::string spec = "synthetic:tiny";
  const std::string hash = model::HashWeights(LoadCheckpoint(spec));
  int syntheses = 0;
  Load(spec, dir_, &syntheses);
  const std::string path = SyntheticCachePath(spec, dir_);
  const auto size = std::filesystem::file_size(path);
  // A flipped byte in the last tensor: the weights no longer hash to the
  // recorded value.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 100));
    char c = 0;
    f.read(&c, 1);
    f.seekp(static_cast<std::streamoff>(size - 100));
    c = static_cast<char>(c ^ 1);
    f.write(&c, 1);
  }
  EXPECT_EQ(model::HashWeights(Load(spec, dir_, &syntheses)), hash);
  EXPECT_EQ(syntheses, 2) << "a damaged file is synthesised again";
  EXPECT_EQ(model::HashWeights(Load(spec, dir_, &syntheses)), hash);
  EXPECT_EQ(syntheses, 2) << "and rewritten whole";
  // Truncated, and another spec's file under this spec's name.
  std::filesystem::resize_file(path, size / 2);
  EXPECT_EQ(model::HashWeights(Load(spec, dir_, &syntheses)), hash);
  EXPECT_EQ(syntheses, 3);
  std::filesystem::copy_file(SyntheticCachePath(spec, dir_),
                             SyntheticCachePath("synthetic:gemma", dir_));
  const std::string gemma = model::HashWeights(LoadCheckpoint("synthetic:gemma"));
  EXPECT_EQ(model::HashWeights(Load("synthetic:gemma", dir_, &syntheses)), gemma);
  EXPECT_EQ(syntheses, 4) << "a file whose spec differs is not used";
  // Garbage.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "SBWCACH1\xff\xff\xff\xff garbage";
  EXPECT_EQ(model::HashWeights(Load(spec, dir_, &syntheses)), hash);
  EXPECT_EQ(syntheses, 5);
}

TEST_F(SyntheticCacheTest, AFolderThatCannotBeWrittenOnlyLosesTheCache) {
  int syntheses = 0;
  const std::string missing = dir_ + "/no/such/folder";
  const std::string hash = model::HashWeights(LoadCheckpoint("synthetic:tiny"));
  EXPECT_EQ(model::HashWeights(Load("synthetic:tiny", missing, &syntheses)), hash);
  EXPECT_EQ(model::HashWeights(Load("synthetic:tiny", missing, &syntheses)), hash);
  EXPECT_EQ(syntheses, 2);
}

}  // namespace
}  // namespace samebits::formats
