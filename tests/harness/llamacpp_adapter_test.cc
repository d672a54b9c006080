// The llama.cpp adapter (adapters/llama.cpp) end to end, through its
// profile alone (engines/llama.cpp.json): `samebits gate --engine
// llama.cpp` holds each axis to its baseline bit for bit, with the
// differences the profile declares (measured by its card) reported KNOWN;
// its logits are llama.cpp's own (the shared dumps llama.cpp wrote, bit for
// bit); and its F32 logits conform to samebits' reference pass (NMSE <=
// 1e-4). Built only with -DSAMEBITS_LLAMACPP_TESTS=ON, after
// adapters/llama.cpp/build.sh: a missing adapter then fails every test
// here (the profile's command prints an `error` record), never skips it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/harness/standin_helpers.h"
#include "tests/support/data_folder.h"

namespace samebits::standin {
namespace {

using ::testing::HasSubstr;

// The shared F32 llama file (../shared/checkpoints/README.md), which
// llama.cpp's own dumps in llamacpp-logits/ were made from, named as the
// card names it: relative to the source tree, where the tests run (samebits
// shows samebits-engine's checkpoints relative to it, and conform matches
// cells by that name).
const std::string kCheckpoint = "gguf:../shared/checkpoints/tiny_dense_llama_f32.gguf";

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class LlamacppAdapter : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(references_);
    std::filesystem::current_path(Source(""));
  }
  void TearDown() override { std::filesystem::current_path(cwd_); }

  std::filesystem::path cwd_ = std::filesystem::current_path();

  TempDir dir_{"llamacpp-adapter"};
  std::string llama_db_ = (dir_.path() / "llama.db").string();
  std::string reference_db_ = (dir_.path() / "reference.db").string();
  std::string references_ = (dir_.path() / "references").string();
};

TEST_F(LlamacppAdapter, IsBuilt) {
  // The profile's command finds the adapter build.sh made for this tree.
  const CommandResult help =
      RunCommand({Source("adapters/llama.cpp/samebits-llamacpp"), "run", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.output;
  EXPECT_THAT(help.output, HasSubstr("--flash-attn off|on"));
}

TEST_F(LlamacppAdapter, GivesLlamacppsOwnLogitsBitForBit) {
  // llama.cpp's dump of this file (one token per llama_decode, 1 thread,
  // F32 K/V cache, flash attention off): the first 21 positions of the
  // shared 48-token scenario, fed the same way, hold the same bytes.
  SAMEBITS_SKIP_WITHOUT_DATA(
      data_folder::Path("checkpoints/llamacpp-logits/tiny_dense_llama_f32.t1.seq.f32"));
  const std::string dump = (dir_.path() / "p48.f32").string();
  const CommandResult run =
      RunCommand({Source("adapters/llama.cpp/samebits-llamacpp"), "run", "--checkpoint",
                  kCheckpoint, "--scenario", Source("../shared/checkpoints/llamacpp48-v512.json"),
                  "--feed", "token", "--dump-logits", dump});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string ours = ReadBytes(dump);
  const std::string theirs =
      ReadBytes(Source("../shared/checkpoints/llamacpp-logits/tiny_dense_llama_f32.t1.seq.f32"));
  ASSERT_EQ(theirs.size(), 21u * 512 * 4);
  ASSERT_EQ(ours.size(), 48u * 512 * 4);
  EXPECT_EQ(std::memcmp(ours.data(), theirs.data(), theirs.size()), 0);
}

// samebits-engine's GGUF export of each shared file of issue 25's
// architectures (Gemma 2 and 3, Cohere2, Llama 3.1, Phi-3) is a file
// llama.cpp reads as it reads the original: the same logits, byte for
// byte, on the 48-token prompt that crosses the sliding windows. (Before
// the export wrote the window keys, Cohere2's logit scale and Phi-3's fused
// gate/up tensor, llama.cpp refused three of them and read the others with
// other windows.)
TEST_F(LlamacppAdapter, ReadsSamebitsExportsAsItReadsTheOriginals) {
  const std::string adapter = Source("adapters/llama.cpp/samebits-llamacpp");
  const std::string scenario = Source("../shared/checkpoints/llamacpp48-v512.json");
  SAMEBITS_SKIP_WITHOUT_DATA(scenario);
  for (const std::string name :
       {"tiny_dense_gemma2_f32", "tiny_dense_gemma2_bf16", "tiny_dense_gemma3_f32",
        "tiny_dense_cohere2_f32", "tiny_dense_cohere2_bf16", "tiny_dense_llama3_f32",
        "tiny_dense_phi3_f32"}) {
    SCOPED_TRACE(name);
    const std::string original = Source("../shared/checkpoints/" + name + ".gguf");
    const std::string exported = (dir_.path() / (name + ".gguf")).string();
    const CommandResult written =
        RunCommand({BinDir() + "/samebits-engine", "export", "gguf:" + original, exported});
    ASSERT_EQ(written.exit_code, 0) << written.output;
    std::vector<std::string> dumps;
    for (const std::string& file : {original, exported}) {
      dumps.push_back((dir_.path() / (name + std::to_string(dumps.size()) + ".f32")).string());
      const CommandResult run = RunCommand({adapter, "run", "--checkpoint", "gguf:" + file,
                                            "--scenario", scenario, "--dump-logits", dumps.back()});
      ASSERT_EQ(run.exit_code, 0) << file << ": " << run.output;
    }
    const std::string theirs = ReadBytes(dumps[0]), ours = ReadBytes(dumps[1]);
    ASSERT_EQ(theirs.size(), 48u * 512 * 4);
    EXPECT_TRUE(ours == theirs);
  }
}

// Where llama.cpp's greedy tokens leave the reference pass's (this BF16
// file: at step 2 of classic), `conform` reruns llama.cpp with the
// reference's tokens forced and measures every step on the same contexts.
TEST_F(LlamacppAdapter, ConformForcesTheReferenceTokensWhereTheContinuationsDiverge) {
  SAMEBITS_SKIP_WITHOUT_DATA(data_folder::Path("checkpoints/tiny_dense_llama_bf16.gguf"));
  const CommandResult c = RunCommand(
      {BinDir() + "/samebits", "conform", "engine:" + OwnEngineProfile(dir_.path()),
       "engine:llama.cpp", "--config-a", "reference", "--checkpoint",
       "gguf:../shared/checkpoints/tiny_dense_llama_bf16.gguf", "--scenario", "classic"});
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_THAT(c.output, HasSubstr("steps 0-7 of 8 (B's own continuation diverged at step 2"));
  EXPECT_THAT(c.output, HasSubstr("B was rerun with A's tokens forced"));
}

TEST_F(LlamacppAdapter, IsGatedThroughItsProfileAndConformsToTheReferencePass) {
  SAMEBITS_SKIP_WITHOUT_DATA(data_folder::Path("checkpoints/tiny_dense_llama_f32.gguf"));
  // No reference is committed for llama.cpp (its bits depend on its build
  // and the CPU's kernels): the run's baseline becomes the reference, which
  // is written only when every configuration agrees with the baseline or
  // differs as declared; then the gate judges the run.
  const ProfileGate g = GateAgainstOwnBaseline("llama.cpp", llama_db_, kCheckpoint, references_);
  ASSERT_EQ(g.run.exit_code, 0) << g.run.output;
  ASSERT_EQ(g.generate.exit_code, 0) << g.generate.output;
  const CommandResult& gate = g.gate;
  EXPECT_EQ(gate.exit_code, 0) << gate.output;
  // What its card measured on this file and its profile declares: threads
  // and micro-batches keep the bits; token-by-token feeding, flash
  // attention, an F16 cache and companions change them (KNOWN; FIXED, a
  // failure, once one stops differing).
  for (const char* same : {"t1", "t2", "t3", "t1-ub64", "t1-ub7"}) {
    EXPECT_EQ(StoredCode(llama_db_, same), "PASS") << same << "\n" << gate.output;
  }
  for (const char* known : {"t1-token", "t1-fa_on", "t1-kvf16", "t1-together", "t1-staggered"}) {
    EXPECT_EQ(StoredCode(llama_db_, known), "KNOWN") << known << "\n" << gate.output;
  }

  // samebits' reference pass on the same file and scenario (from the
  // scenarios folder, not the real-file suite), then the adapter's baseline
  // measured against it.
  const auto [reference, conform] = ConformT1ToReferencePass(kCheckpoint, reference_db_, llama_db_);
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  EXPECT_EQ(conform.exit_code, 0) << conform.output;
  EXPECT_THAT(conform.output,
              HasSubstr("CONFORMS  " + kCheckpoint + " / classic  (reference vs t1)"));
  EXPECT_THAT(conform.output, HasSubstr("top-1 8/8"));
}

}  // namespace
}  // namespace samebits::standin
