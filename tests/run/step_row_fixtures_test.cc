// samebits-engine's step fields and dump rows against the fixture file every
// writer of the records shares (tests/protocol/fixtures/records/rows.json):
// for each row of logits, the C9 hashes and counts (numerics::HashLogits),
// the argmax (model::Argmax, as the step driver takes it) and the dump's
// bytes (run::LogitDumpWriter) are the file's. tests/protocol/
// records_mirror.py holds the Python adapters' writers to the same file.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "engine/model/sampler.h"
#include "engine/numerics/hash.h"
#include "engine/run/logit_dump.h"

namespace samebits::run {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json ReadFixture() {
  std::ifstream in(fs::path(SAMEBITS_SOURCE_DIR) / "tests/protocol/fixtures/records/rows.json");
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

uint32_t HexBits(const std::string& hex) {
  return static_cast<uint32_t>(std::stoul(hex, nullptr, 16));
}

std::vector<uint8_t> HexBytes(const std::string& hex) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return bytes;
}

TEST(StepRowFixtures, TheFileHoldsRowsAndHashes) {
  const json fixture = ReadFixture();
  EXPECT_GE(fixture.at("rows").size(), 8u);
  EXPECT_GE(fixture.at("hashes").size(), 4u);
}

// (The fixture is held in a variable: a range-for over a member of a
// temporary would read freed memory.)
TEST(StepRowFixtures, EachRowGivesTheStepFieldsTheFileNames) {
  const json fixture = ReadFixture();
  for (const json& row : fixture.at("rows")) {
    const std::string name = row.at("name");
    std::vector<float> logits;
    for (const json& hex : row.at("bits")) logits.push_back(std::bit_cast<float>(HexBits(hex)));
    const numerics::LogitHashes hashes = numerics::HashLogits(logits);
    const json& step = row.at("step");
    EXPECT_EQ(numerics::Hex16(hashes.fnv1a64), step.at("fnv1a64").get<std::string>()) << name;
    EXPECT_EQ(numerics::Hex16(hashes.xxh3_64), step.at("xxh3_64").get<std::string>()) << name;
    EXPECT_EQ(hashes.nan_count, step.at("nan").get<int>()) << name;
    EXPECT_EQ(hashes.inf_count, step.at("inf").get<int>()) << name;
    EXPECT_EQ(model::Argmax(logits), step.at("argmax").get<int>()) << name;
  }
}

// A dump row is the row's bits, little-endian, unchanged: NaN payloads and
// signs too (only the hashes make NaNs canonical).
TEST(StepRowFixtures, EachRowDumpsAsItsBitsLittleEndian) {
  const fs::path file =
      fs::temp_directory_path() /
      ("samebits-step-rows-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       ".f32");
  const json fixture = ReadFixture();
  std::vector<uint8_t> expected;
  {
    LogitDumpWriter dump(file.string());
    for (const json& row : fixture.at("rows")) {
      std::vector<float> logits;
      for (const json& hex : row.at("bits")) {
        const uint32_t bits = HexBits(hex);
        logits.push_back(std::bit_cast<float>(bits));
        for (int byte = 0; byte < 4; ++byte) expected.push_back((bits >> (8 * byte)) & 0xff);
      }
      dump.WriteRow(logits);
    }
    dump.Close();
  }
  std::ifstream in(file, std::ios::binary);
  const std::vector<uint8_t> written((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
  fs::remove(file);
  EXPECT_EQ(written, expected);
}

TEST(StepRowFixtures, EachByteStringHasTheDigestsTheFileNames) {
  const json fixture = ReadFixture();
  for (const json& entry : fixture.at("hashes")) {
    const std::vector<uint8_t> bytes = HexBytes(entry.at("hex"));
    EXPECT_EQ(numerics::Hex16(numerics::Fnv1a64(bytes.data(), bytes.size())),
              entry.at("fnv1a64").get<std::string>())
        << entry.at("hex");
    EXPECT_EQ(numerics::Hex16(XXH3_64bits(bytes.data(), bytes.size())),
              entry.at("xxh3_64").get<std::string>())
        << entry.at("hex");
  }
}

}  // namespace
}  // namespace samebits::run
