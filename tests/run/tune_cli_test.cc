// `samebits-engine tune` and the wisdom it writes, end to end through the
// real program: tune writes an entry per thread count, `run` takes the
// entry for its machine and work (hello says which), a flag beats the
// wisdom, the bits never change, and a wisdom file tune cannot read is
// left as it was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/protocol/records.h"
#include "tests/support/engine_process.h"

namespace samebits {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::RunEngine;

class TuneCli : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::path(::testing::TempDir()) /
              ("tune_cli_test." + std::to_string(::getpid()));
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }
  std::string Path(const std::string& name) const { return (folder_ / name).string(); }
  std::filesystem::path folder_;
};

std::string Scenario() {
  return std::string("'") + SAMEBITS_SOURCE_DIR + "/scenarios/classic.json'";
}

// Runs the classic scenario and returns its transcript's raw hello and the
// steps' hashes.
struct Ran {
  json hello;
  std::vector<uint64_t> hashes;
};
Ran RunClassic(const std::string& checkpoint, const std::string& more) {
  const testing::EngineResult r =
      RunEngine("run --checkpoint " + checkpoint + " --scenario " + Scenario() + " " + more);
  EXPECT_EQ(r.exit_code, 0) << more << "\n" << r.err;
  Ran ran;
  const protocol::Transcript t = protocol::ReadTranscript(r.out);
  EXPECT_TRUE(t.ok) << t.failure;
  ran.hello = json::parse(r.out.substr(0, r.out.find('\n')));
  for (const protocol::Step& s : t.steps) ran.hashes.push_back(s.xxh3_64);
  return ran;
}

const char* const kQuickTune =
    "tune --budget 10 --rounds 1 --context 4 --decode-steps 2 --prompt 8";

TEST_F(TuneCli, TuneWritesAnEntryPerThreadCountThatRunUsesWithTheSameBits) {
  const std::string wisdom = Path("wisdom.json");
  const testing::EngineResult tuned =
      RunEngine(std::string(kQuickTune) +
                " --threads-list 1,2 --checkpoint synthetic:tiny --wisdom " + wisdom);
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_THAT(tuned.out, HasSubstr("bits identical: yes"));
  EXPECT_THAT(tuned.out, HasSubstr("wrote 2 entries to " + wisdom));
  const json file = json::parse(testing::ReadWholeFile(wisdom));
  ASSERT_EQ(file["entries"].size(), 2u);
  const json& two = file["entries"][1];
  EXPECT_EQ(two["threads"], 2);
  EXPECT_EQ(two["weights"], "bf16");  // synthetic:tiny's default

  const Ran with = RunClassic("synthetic:tiny", "--threads 2 --wisdom " + wisdom);
  const json& tuning = with.hello["tuning"];
  EXPECT_EQ(tuning["wisdom"]["file"], wisdom);
  EXPECT_EQ(tuning["wisdom"]["entry"]["threads"], 2);
  for (const auto& [name, value] : two["knobs"].items()) EXPECT_EQ(tuning["knobs"][name], value);
  const Ran without = RunClassic("synthetic:tiny", "--threads 2 --wisdom none");
  EXPECT_FALSE(without.hello["tuning"].contains("wisdom"));
  EXPECT_EQ(with.hashes, without.hashes);
  ASSERT_FALSE(with.hashes.empty());

  // A knob's flag beats the wisdom's value.
  const Ran flagged =
      RunClassic("synthetic:tiny", "--threads 2 --gemv-chunk-bytes 8192 --wisdom " + wisdom);
  EXPECT_EQ(flagged.hello["tuning"]["knobs"]["gemv_chunk_bytes"], 8192);
  EXPECT_EQ(flagged.hello["config"]["gemv_chunk_bytes"], 8192);
  EXPECT_EQ(flagged.hashes, without.hashes);
}

TEST_F(TuneCli, AnEntryIsForItsWeightType) {
  // This machine's key, from a tuned entry, made an entry for Q4_0 weights.
  const std::string tuned = Path("tuned.json");
  ASSERT_EQ(RunEngine(std::string(kQuickTune) +
                      " --threads-list 1 --checkpoint synthetic:tiny "
                      "--wisdom " +
                      tuned)
                .exit_code,
            0);
  json file = json::parse(testing::ReadWholeFile(tuned));
  json entry = file["entries"][0];
  entry["weights"] = "q4_0";
  entry["knobs"] = {{"gemm_tile_m", 3}, {"attention_row_block", 2}};
  file["entries"] = json::array({entry});
  const std::string q4 = Path("q4.json");
  std::ofstream(q4) << file.dump();

  const Ran quantized = RunClassic("synthetic:tiny-q4_0", "--threads 1 --wisdom " + q4);
  EXPECT_EQ(quantized.hello["tuning"]["knobs"]["gemm_tile_m"], 3);
  EXPECT_EQ(quantized.hello["tuning"]["wisdom"]["entry"]["weights"], "q4_0");
  const Ran plain = RunClassic("synthetic:tiny-q4_0", "--threads 1 --wisdom none");
  EXPECT_EQ(quantized.hashes, plain.hashes);
  // BF16 weights find no entry there: the file is named, its entry null.
  const Ran bf16 = RunClassic("synthetic:tiny", "--threads 1 --wisdom " + q4);
  EXPECT_TRUE(bf16.hello["tuning"]["wisdom"]["entry"].is_null());
  EXPECT_EQ(bf16.hello["tuning"]["knobs"]["gemm_tile_m"], 64);
}

TEST_F(TuneCli, AWisdomFileTuneCannotReadIsLeftAsItWas) {
  const std::string damaged = Path("damaged.json");
  const std::string text = R"({"samebits_wisdom": 1, "entries": [{"cpu": 5}]})";
  std::ofstream(damaged) << text;
  const testing::EngineResult r =
      RunEngine(std::string(kQuickTune) + " --checkpoint synthetic:tiny --wisdom " + damaged);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("tune leaves it as it is"));
  EXPECT_EQ(testing::ReadWholeFile(damaged), text);
  // And `run` refuses it rather than running untuned without a word.
  const testing::EngineResult run = RunEngine("run --checkpoint synthetic:tiny --scenario " +
                                              Scenario() + " --wisdom " + damaged);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("wisdom file " + damaged));
  EXPECT_THAT(run.err, HasSubstr("--wisdom none"));
  EXPECT_EQ(RunEngine("tune --wisdom none").exit_code, 2);
}

}  // namespace
}  // namespace samebits
