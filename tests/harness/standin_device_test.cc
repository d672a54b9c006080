// A cell's device and repeats end to end, with the real `samebits` and the
// stand-in engine: a `device` in a child's hello (a GPU) reaches the store,
// the bundle, an import and `samebits compare`, which names another GPU as
// the cause of a difference (as it names another math library), not the
// code; and an engine that ran a cell several times in one process and got
// more than one output fails that cell, in the gate, the store and a card.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/harness/harness_test_util.h"
#include "tests/harness/standin_matrix.h"

namespace samebits::standin {
namespace {

class StandinDevice : public ::testing::Test {
 protected:
  StandinDevice() : m_("standin_device") {
    std::filesystem::create_directories(m_.Path("references"));  // no references: not judged here
  }

  StandinMatrix m_;
};

TEST_F(StandinDevice, AGpuInHelloReachesTheStoreTheBundleAndCompare) {
  m_.RunAndExport("gpu-h200", "h200.db", "h200.json");
  m_.RunAndExport("gpu-h100", "h100.db", "h100.json");

  // The store keeps each cell's device as its hello said it.
  const harness::RunResult stored = m_.Latest("h200.db");
  ASSERT_FALSE(stored.cells.empty());
  for (const harness::CellResult& c : stored.cells) {
    ASSERT_TRUE(c.device.has_value()) << c.config.name;
    EXPECT_EQ(c.device->kind, "cuda");
    EXPECT_EQ(c.device->name, "NVIDIA H200");
    EXPECT_EQ(c.device->capability, "9.0");
    EXPECT_EQ(c.device->multiprocessors, 132);
    EXPECT_EQ(c.device->driver, "580.159.04");
    EXPECT_EQ(c.device->libraries, "CUDA 13.0, cuBLAS 13.1.0");
  }
  // `show` says it for a person.
  const CommandResult show = m_.Samebits({"show", "--db", m_.Path("h200.db")});
  EXPECT_NE(show.output.find("device: NVIDIA H200 (cuda, compute capability 9.0, 132 "
                             "multiprocessors, driver 580.159.04; CUDA 13.0, cuBLAS 13.1.0)"),
            std::string::npos)
      << show.output;

  // The bundle carries it on every cell, and an import keeps it.
  const nlohmann::json bundle =
      nlohmann::json::parse(harness::testing::ReadFile(m_.Path("h200.json")));
  const nlohmann::json& cells = bundle.at("runs").at(0).at("cells");
  ASSERT_FALSE(cells.empty());
  for (const nlohmann::json& c : cells) EXPECT_EQ(c.at("device").at("name"), "NVIDIA H200");
  const CommandResult import =
      m_.Samebits({"import", m_.Path("h200.json"), "--db", m_.Path("imported.db")});
  ASSERT_EQ(import.exit_code, 0) << import.output;
  EXPECT_EQ(m_.Latest("imported.db").cells.front().device, stored.cells.front().device);

  // Another GPU whose libm-profile cells differ: compare names the device,
  // not the code; the portable cells agree.
  const CommandResult cmp = m_.Samebits({"compare", m_.Path("h200.json"), m_.Path("h100.json")});
  EXPECT_EQ(cmp.exit_code, 1) << cmp.output;
  EXPECT_NE(cmp.output.find("the device differs"), std::string::npos) << cmp.output;
  EXPECT_NE(cmp.output.find("NVIDIA H100 80GB HBM3"), std::string::npos) << cmp.output;
  EXPECT_EQ(cmp.output.find("the code differs"), std::string::npos) << cmp.output;
}

TEST_F(StandinDevice, ABundledDeviceWithoutAKindIsRefused) {
  m_.RunAndExport("gpu-h200", "h200.db", "h200.json");
  nlohmann::json bundle = nlohmann::json::parse(harness::testing::ReadFile(m_.Path("h200.json")));
  bundle["runs"][0]["cells"][0]["device"].erase("kind");
  std::ofstream(m_.Path("bad.json")) << bundle.dump();
  const CommandResult import =
      m_.Samebits({"import", m_.Path("bad.json"), "--db", m_.Path("bad.db")});
  EXPECT_EQ(import.exit_code, 2) << import.output;
  EXPECT_NE(import.output.find("device"), std::string::npos) << import.output;
  EXPECT_NE(import.output.find("'kind'"), std::string::npos) << import.output;
}

TEST_F(StandinDevice, RepeatsThatGaveSeveralOutputsFailTheirCell) {
  // Every cell says it ran 4 times in one process; at 3 threads the 4 runs
  // gave 2 distinct outputs, though the first one's steps match the others.
  const std::vector<std::string> gate = {BinDir() + "/samebits",
                                         "gate",
                                         "--engine",
                                         FaultyEngine(m_.Path("."), "repeats-vary-at-3-threads"),
                                         "--checkpoint",
                                         "synthetic:tiny",
                                         "--scenario",
                                         WriteScenario(m_.Path(".")),
                                         "--config",
                                         "cpu-t1,cpu-t2,cpu-t3",
                                         "--db",
                                         m_.Path("repeats.db"),
                                         "--references-dir",
                                         m_.Path("references")};
  const CommandResult r = RunCommand(gate);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("gave different outputs when their engine ran them again"),
            std::string::npos)
      << r.output;
  const harness::RunResult run = m_.Latest("repeats.db");
  for (const harness::CellResult& c : run.cells) {
    ASSERT_TRUE(c.repeats.has_value()) << c.config.name;
    EXPECT_EQ(c.repeats->count, 4);
    if (c.config.name == "cpu-t3") {
      EXPECT_EQ(harness::ResultCodeName(c.code), std::string("FAIL"));
      EXPECT_EQ(c.repeats->distinct, 2);
      EXPECT_NE(c.message.find("4 repeats in one process gave 2 distinct outputs: repeat 3 first "
                               "differs from repeat 1 at step 5"),
                std::string::npos)
          << c.message;
    } else {
      EXPECT_EQ(c.repeats->distinct, 1) << c.config.name;
      EXPECT_NE(harness::ResultCodeName(c.code), std::string("FAIL")) << c.config.name;
    }
  }

  // A card row says the same: the row differs from the repeats' first
  // differing step; the others say their repeats agreed.
  const CommandResult card =
      RunCommand({BinDir() + "/samebits", "card", "--engine-profile",
                  Source("tests/standins/standin_profile.json"), "--program",
                  FaultyEngine(m_.Path("."), "repeats-vary-at-3-threads"), "--checkpoint",
                  "synthetic:tiny", "--scenario", WriteScenario(m_.Path(".")), "--no-reference"});
  EXPECT_EQ(card.exit_code, 1) << card.output;
  EXPECT_NE(card.output.find("| threads | 3 | cpu-t3 | differs from step 5 (position 13); 4 "
                             "repeats in one process: 2 distinct outputs |"),
            std::string::npos)
      << card.output;
  EXPECT_NE(card.output.find("| threads | 2 | cpu-t2 | identical; 4 repeats in one process: 1 "
                             "distinct output |"),
            std::string::npos)
      << card.output;
}

}  // namespace
}  // namespace samebits::standin
