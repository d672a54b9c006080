// The PyTorch adapter (adapters/pytorch) end to end, through its profile
// alone (engines/pytorch.json): `samebits gate --engine pytorch` holds each
// of its axes to its baseline bit for bit, with the differences the profile
// declares (measured by its card) reported KNOWN, and its F32 logits conform
// to samebits' reference pass (NMSE <= 1e-4) on the same checkpoint and
// scenario. Needs Debian's python3-torch and python3-numpy
// (ci/install-deps.sh): without them the adapter fails and so does the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/harness/standin_helpers.h"
#include "tests/support/data_folder.h"

namespace samebits::standin {
namespace {

using ::testing::HasSubstr;

class PytorchAdapter : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(references_); }

  TempDir dir_{"pytorch-adapter"};
  std::string pytorch_db_ = (dir_.path() / "pytorch.db").string();
  std::string reference_db_ = (dir_.path() / "reference.db").string();
  std::string references_ = (dir_.path() / "references").string();

  void ExpectSharedFileConforms(const std::string& file, const std::string& scenario,
                                const std::string& scenarios_dir, int steps);
};

TEST_F(PytorchAdapter, IsGatedThroughItsProfileAndConformsToTheReferencePass) {
  // One small F32 checkpoint (a MoE with q/k norms and a sliding window,
  // exported to safetensors by the adapter), one scenario: every axis of
  // the profile's card, each alone.
  const std::string checkpoint = "synthetic:tiny-f32";
  // PyTorch's hashes depend on its build and the CPU's kernels, so no
  // reference is committed for it: the run's baseline becomes the
  // reference, which is only written when every configuration agrees with
  // the baseline or differs as declared; then the gate judges the run.
  const ProfileGate g = GateAgainstOwnBaseline("pytorch", pytorch_db_, checkpoint, references_);
  ASSERT_EQ(g.run.exit_code, 0) << g.run.output;
  ASSERT_EQ(g.generate.exit_code, 0) << g.generate.output;
  const CommandResult& gate = g.gate;
  EXPECT_EQ(gate.exit_code, 0) << gate.output;
  EXPECT_EQ(StoredCode(pytorch_db_, "t1"), "PASS") << gate.output;
  EXPECT_EQ(StoredCode(pytorch_db_, "t2"), "PASS") << gate.output;
  // What its card measured and its profile declares: BF16, token-by-token
  // feeding and a padded batch change PyTorch's bits (KNOWN; FIXED, a
  // failure, once one stops differing); a second thread does not.
  EXPECT_EQ(StoredCode(pytorch_db_, "t1-bf16"), "KNOWN") << gate.output;
  EXPECT_EQ(StoredCode(pytorch_db_, "t1-token"), "KNOWN") << gate.output;
  EXPECT_EQ(StoredCode(pytorch_db_, "t1-c3"), "KNOWN") << gate.output;
  // The GPU axes on a machine without one (CI's): CUDA is UNSUPPORTED with
  // the adapter's reason, as TF32 (a CUDA mode) is on the CPU; deterministic
  // algorithms and 8 repeats in one process change no CPU bit.
  const harness::RunResult stored = LatestRun(pytorch_db_);
  for (const harness::CellResult& c : stored.cells) {
    if (c.config.name == "t1-cuda" && c.code == harness::ResultCode::kUnsupported)
      EXPECT_THAT(c.message, HasSubstr("no CUDA device")) << c.message;
    if (c.config.name == "t1-tf32on") {
      EXPECT_EQ(c.code, harness::ResultCode::kUnsupported) << c.message;
      EXPECT_THAT(c.message, HasSubstr("TF32 is a CUDA matmul mode")) << c.message;
    }
    if (c.config.name == "t1-r8") {
      ASSERT_TRUE(c.repeats.has_value());
      EXPECT_EQ(c.repeats->count, 8);
      EXPECT_EQ(c.repeats->distinct, 1);
    }
    EXPECT_FALSE(c.device.has_value() && c.config.name == "t1") << "the CPU baseline has no device";
  }
  EXPECT_EQ(StoredCode(pytorch_db_, "t1-detoff"), "(no cell t1-detoff)");
  EXPECT_EQ(StoredCode(pytorch_db_, "t1-deton"), "PASS") << gate.output;
  EXPECT_EQ(StoredCode(pytorch_db_, "t1-r8"), "PASS") << gate.output;

  // samebits' reference pass on the same checkpoint and scenario, then the
  // adapter's baseline measured against it.
  const auto [reference, conform] =
      ConformT1ToReferencePass(checkpoint, reference_db_, pytorch_db_);
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_EQ(conform.exit_code, 0) << conform.output;
  EXPECT_THAT(conform.output,
              HasSubstr("CONFORMS  " + checkpoint + " / classic  (reference vs t1)"));
  EXPECT_THAT(conform.output, HasSubstr("top-1 8/8"));
}

// The t1 configuration of shared file FILE (relative to the source tree,
// as samebits names the checkpoint in both stores), run by the adapter on
// SCENARIO and measured against samebits' reference pass, conforms with
// every one of its `steps` argmaxes equal.
void PytorchAdapter::ExpectSharedFileConforms(const std::string& file, const std::string& scenario,
                                              const std::string& scenarios_dir, int steps) {
  const std::string checkpoint = "gguf:../shared/checkpoints/" + file;
  SAMEBITS_SKIP_WITHOUT_DATA(data_folder::Path("checkpoints/" + file));
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(Source(""));
  const CommandResult run =
      RunCommand({BinDir() + "/samebits", "run", "--engine", "pytorch", "--checkpoint", checkpoint,
                  "--scenarios-dir", scenarios_dir, "--scenario", scenario, "--config", "t1",
                  "--dump-logits", "--db", pytorch_db_});
  const auto [reference, conform] =
      ConformT1ToReferencePass(checkpoint, reference_db_, pytorch_db_, scenario, scenarios_dir);
  std::filesystem::current_path(cwd);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_EQ(conform.exit_code, 0) << conform.output;
  EXPECT_THAT(conform.output,
              HasSubstr("CONFORMS  " + checkpoint + " / " + scenario + "  (reference vs t1)"));
  EXPECT_THAT(conform.output,
              HasSubstr("top-1 " + std::to_string(steps) + "/" + std::to_string(steps)));
}

// The Phi-3 class as the export writes it for llama.cpp's Phi-3 file (q/k/v
// fused into `qkv_proj`, gate/up into `gate_up_proj`), read by the adapter's
// transformers-style forward: its logits conform to the reference pass.
TEST_F(PytorchAdapter, ReadsThePhi3ClassAsExported) {
  ExpectSharedFileConforms("tiny_dense_phi3_f32.gguf", "classic", Source("scenarios"), 8);
}

// Llama 3.1 as the export writes it for llama.cpp's file (unpermuted q/k
// rows, `rope_scaling` llama3 instead of the rope_freqs tensor), read as
// transformers reads it: the adapter's rotate_half and its copy of
// transformers' llama3 frequencies conform to the reference pass on the
// 48-token prompt, where all three of the file's frequency bands act.
TEST_F(PytorchAdapter, ReadsLlama31RopeScalingAsExported) {
  ExpectSharedFileConforms("tiny_dense_llama3_f32.gguf", "llamacpp48-v512",
                           Source("../shared/checkpoints"), 48);
}

}  // namespace
}  // namespace samebits::standin
