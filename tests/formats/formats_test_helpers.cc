#include "tests/formats/formats_test_helpers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <vector>

#include "engine/formats/checkpoint.h"
#include "engine/model/forward.h"
#include "engine/model/tensor_spec.h"
#include "engine/numerics/math.h"
#include "engine/threads/thread_pool.h"

namespace samebits::formats::testing {

std::string CheckpointsDir() {
  return data_folder::Path("checkpoints");
}

std::string Checkpoint(const std::string& name) {
  return CheckpointsDir() + "/" + name;
}

bool HaveCheckpoints() {
  return data_folder::Missing(CheckpointsDir()).empty();
}

std::vector<std::byte> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  if (!chars.empty()) std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

void WriteBytes(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

namespace {

// The scratch folders this test process made, removed when it exits, so
// that runs of the suite leave nothing behind in the temporary folder.
class ScratchFolders {
 public:
  ~ScratchFolders() {
    std::error_code ignored;
    for (const auto& dir : dirs_) std::filesystem::remove_all(dir, ignored);
  }
  void Add(const std::filesystem::path& dir) { dirs_.push_back(dir); }

 private:
  std::vector<std::filesystem::path> dirs_;
};

}  // namespace

std::string ScratchDir(const std::string& name) {
  static ScratchFolders made;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("samebits-formats-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  made.Add(dir);
  return dir.string();
}

namespace {

std::vector<std::vector<float>> RunOneByOne(model::Forward& f, const model::ModelWeights& w,
                                            const std::vector<int32_t>& tokens) {
  model::InferenceState state = model::MakeState(w.config);
  std::vector<std::vector<float>> rows;
  std::vector<float> logits;
  for (int32_t t : tokens) {
    f.Run(state, std::span<const int32_t>(&t, 1), false, logits, nullptr);
    rows.push_back(logits);
  }
  return rows;
}

}  // namespace

std::vector<std::vector<float>> ReferenceLogits(const model::ModelWeights& w,
                                                const std::vector<int32_t>& tokens,
                                                numerics::QuantDot quant_dot) {
  const auto& math = numerics::GetMathLibrary(numerics::MathProfile::kPortable);
  auto f = model::MakeReferenceForward(w, math, kernels::BestIsa(), quant_dot);
  return RunOneByOne(*f, w, tokens);
}

std::vector<std::vector<float>> CpuLogits(const model::ModelWeights& w,
                                          const std::vector<int32_t>& tokens, int threads,
                                          numerics::QuantDot quant_dot, kernels::Isa isa) {
  const auto& math = numerics::GetMathLibrary(numerics::MathProfile::kPortable);
  threads::ThreadPool pool(threads);
  model::CpuOptions options;
  options.isa = isa;
  options.quant_dot = quant_dot;
  auto f = model::MakeCpuForward(w, math, pool, options);
  return RunOneByOne(*f, w, tokens);
}

std::vector<float> TensorValues(const model::TensorView& v) {
  std::vector<float> out(static_cast<size_t>(v.elements()));
  v.ReadF32(0, v.elements(), out.data());
  return out;
}

bool SameBits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    if (!a[i].empty() && std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0)
      return false;
  }
  return true;
}

std::vector<int32_t> LlamaCppTokens(int n_vocab) {
  std::vector<int32_t> t = {1};
  for (int i = 0; i < 20; ++i) t.push_back(3 + (37 * i + 11) % (n_vocab - 3));
  return t;
}

void ExpectSameModel(const model::ModelWeights& a, const model::ModelWeights& b) {
  EXPECT_EQ(model::HashWeights(a), model::HashWeights(b));
  EXPECT_EQ(a.config.name, b.config.name);
  EXPECT_TRUE(a.config == b.config) << "configurations differ after the round trip";
  std::vector<int32_t> tokens(6);
  for (int i = 0; i < 6; ++i) tokens[i] = (i * 7919 + 13) % a.config.vocab_size;
  EXPECT_TRUE(SameBits(ReferenceLogits(a, tokens), ReferenceLogits(b, tokens)));
}

nlohmann::json ReadConfig(const std::string& dir) {
  std::ifstream in(dir + "/config.json");
  return nlohmann::json::parse(in);
}

void WriteConfig(const std::string& dir, const nlohmann::json& j) {
  std::ofstream out(dir + "/config.json", std::ios::trunc);
  out << j.dump(2);
}

std::string LoadError(const std::string& spec) {
  try {
    LoadCheckpoint(spec);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

}  // namespace samebits::formats::testing
