// Matrix expansion and selection (harness/runner/matrix.h).
#include "harness/runner/matrix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace samebits::runner {
namespace {

std::vector<std::string> Names(const std::vector<harness::Configuration>& configs) {
  std::vector<std::string> out;
  out.reserve(configs.size());
  for (const auto& c : configs) out.push_back(c.name);
  return out;
}

MatrixOptions TwoScenarios() {
  MatrixOptions o;
  o.scenario_files = {"/s/classic.json", "/s/long.json"};
  return o;
}

TEST(Matrix, DefaultConfigurationsInOrder) {
  const auto configs = DefaultConfigurations({1, 2, 3}, {"portable"}, 8192);
  EXPECT_EQ(Names(configs),
            (std::vector<std::string>{"reference", "cpu-t1", "cpu-t2", "cpu-t3", "cpu-t3-chunk8k",
                                      "cpu-scalar", "cpu-avx2", "cpu-avx512", "cpu-neon",
                                      "cpu-t2-b4", "cpu-t3-b8-staggered"}));
  EXPECT_EQ(configs[0].kernels, "reference");
  EXPECT_EQ(configs[3].threads, 3);
  EXPECT_EQ(configs[4].gemv_chunk_bytes, 8192);
  EXPECT_EQ(configs[4].threads, 3);
  EXPECT_EQ(configs[6].isa, "avx2");
  EXPECT_EQ(configs[1].isa, "auto");
  for (const auto& c : configs) EXPECT_EQ(c.math, "portable");
  // Batch invariance: batch 4 together at the second thread count, batch 8
  // staggered at the most; every other configuration runs alone.
  EXPECT_EQ(configs[9].threads, 2);
  EXPECT_EQ(configs[9].batch, 4);
  EXPECT_EQ(configs[9].batch_schedule, "together");
  EXPECT_EQ(configs[10].threads, 3);
  EXPECT_EQ(configs[10].batch, 8);
  EXPECT_EQ(configs[10].batch_schedule, "staggered");
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(configs[i].batch, 1) << configs[i].name;
}

TEST(Matrix, SecondMathProfileSuffixesNames) {
  const auto configs = DefaultConfigurations({2}, {"portable", "libm"}, 8192);
  // 9 per profile: reference, cpu-t2, its chunked twin, 4 ISAs, 2 batches
  ASSERT_EQ(configs.size(), 18u);
  EXPECT_EQ(configs[0].name, "reference");
  EXPECT_EQ(configs[7].name, "cpu-t2-b4");
  EXPECT_EQ(configs[8].name, "cpu-t2-b8-staggered");
  EXPECT_EQ(configs[9].name, "reference-libm");
  EXPECT_EQ(configs[9].math, "libm");
  EXPECT_EQ(configs[10].name, "cpu-t2-libm");
  EXPECT_EQ(configs[11].name, "cpu-t2-chunk8k-libm");
  EXPECT_EQ(configs[16].name, "cpu-t2-b4-libm");
  EXPECT_EQ(configs[16].math, "libm");
  EXPECT_EQ(configs[17].name, "cpu-t2-b8-staggered-libm");
}

TEST(Matrix, ExpandsCheckpointsTimesScenariosTimesConfigurations) {
  const auto cells = ExpandMatrix(TwoScenarios(), {"scalar", "avx2", "avx512"}, "x86_64");
  ASSERT_EQ(cells.size(), DefaultCheckpoints().size() * 2u * 11u);
  ASSERT_EQ(DefaultCheckpoints().size(), 12u);  // tiny, gemma, medium, wide, 8 quantized variants
  EXPECT_EQ(cells[0].checkpoint, "synthetic:tiny");
  EXPECT_EQ(cells[0].scenario, "classic");
  EXPECT_EQ(cells[0].scenario_file, "/s/classic.json");
  EXPECT_EQ(cells[0].config.name, "reference");
  EXPECT_EQ(cells[11].scenario, "long");
  EXPECT_EQ(cells.back().checkpoint, "synthetic:medium-q6_k");
}

TEST(Matrix, MissingIsasAreUnsupportedNotDropped) {
  const auto cells = ExpandMatrix(TwoScenarios(), {"scalar", "avx2"}, "x86_64");
  int unsupported = 0;
  for (const Cell& c : cells) {
    const bool expect_missing = c.config.isa == "avx512" || c.config.isa == "neon";
    EXPECT_EQ(c.supported, !expect_missing) << c.config.name;
    if (!c.supported) {
      ++unsupported;
      EXPECT_NE(c.unsupported_reason.find(c.config.isa), std::string::npos);
    }
  }
  EXPECT_EQ(unsupported, static_cast<int>(DefaultCheckpoints().size()) * 2 * 2);
}

TEST(Matrix, SelectionNarrowsEveryAxis) {
  MatrixOptions o = TwoScenarios();
  o.checkpoints = {"synthetic:tiny"};
  o.scenario_files = {"/s/classic.json"};
  o.configs = {"cpu-t4", "reference", "cpu-t4"};
  o.threads = {1, 4};
  const auto cells = ExpandMatrix(o, {"scalar"}, "x86_64");
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].config.name, "cpu-t4");
  EXPECT_EQ(cells[0].config.threads, 4);
  EXPECT_EQ(cells[1].config.name, "reference");
}

TEST(Matrix, UnknownConfigurationListsTheKnownOnes) {
  MatrixOptions o = TwoScenarios();
  o.configs = {"cpu-t9"};
  try {
    ExpandMatrix(o, {"scalar"}, "x86_64");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cpu-t9"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("cpu-t3-chunk8k"), std::string::npos);
  }
}

TEST(Matrix, BadSelectionsAreErrors) {
  MatrixOptions none;
  EXPECT_THROW(ExpandMatrix(none, {"scalar"}, "x86_64"), std::invalid_argument);
  MatrixOptions bad_threads = TwoScenarios();
  bad_threads.threads = {0};
  EXPECT_THROW(ExpandMatrix(bad_threads, {"scalar"}, "x86_64"), std::invalid_argument);
  MatrixOptions bad_math = TwoScenarios();
  bad_math.math = {"fast"};
  EXPECT_THROW(ExpandMatrix(bad_math, {"scalar"}, "x86_64"), std::invalid_argument);
  MatrixOptions duplicate = TwoScenarios();
  duplicate.scenario_files = {"/a/classic.json", "/b/classic.json"};
  EXPECT_THROW(ExpandMatrix(duplicate, {"scalar"}, "x86_64"), std::invalid_argument);
  try {
    ExpandMatrix(duplicate, {"scalar"}, "x86_64");
  } catch (const std::invalid_argument& e) {
    // Both files are named, so the user knows which two collide.
    EXPECT_NE(std::string(e.what()).find("/a/classic.json and /b/classic.json"), std::string::npos)
        << e.what();
  }
}

TEST(Matrix, StartOrderRunsTheLongestCellsFirstAndKeepsEveryCell) {
  const auto cells = ExpandMatrix(TwoScenarios(), {"scalar", "avx2", "avx512"}, "x86_64");
  const std::vector<size_t> order = StartOrder(cells);
  ASSERT_EQ(order.size(), cells.size());
  std::vector<size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_EQ(cells[order.front()].checkpoint, "synthetic:wide");
  EXPECT_EQ(cells[order.front()].config.name, "reference");
  EXPECT_EQ(cells[order.back()].config.name, "cpu-neon");  // runs no child at all
}

TEST(Matrix, EngineArgumentsCarryTheWholeConfiguration) {
  Cell cell;
  cell.checkpoint = "synthetic:tiny";
  cell.scenario_file = "/s/classic.json";
  cell.config.kernels = "cpu";
  cell.config.threads = 3;
  cell.config.isa = "avx2";
  cell.config.gemv_chunk_bytes = 8192;
  cell.config.math = "libm";
  const std::vector<std::string> args = EngineArguments(cell, true);
  EXPECT_EQ(args, (std::vector<std::string>{"run", "--checkpoint", "synthetic:tiny", "--scenario",
                                            "/s/classic.json", "--kernels", "cpu", "--threads", "3",
                                            "--isa", "avx2", "--math", "libm", "--gemv-chunk-bytes",
                                            "8192", "--trace"}));
}

TEST(Matrix, EngineArgumentsAskForADumpOnlyWithAFile) {
  Cell cell;
  cell.checkpoint = "synthetic:tiny";
  cell.scenario_file = "/s/classic.json";
  const std::vector<std::string> plain = EngineArguments(cell, false);
  EXPECT_EQ(std::find(plain.begin(), plain.end(), "--dump-logits"), plain.end());
  const std::vector<std::string> dumped = EngineArguments(cell, false, "/d/x.f32");
  ASSERT_GE(dumped.size(), 2u);
  EXPECT_EQ(dumped[dumped.size() - 2], "--dump-logits");
  EXPECT_EQ(dumped.back(), "/d/x.f32");
}

Cell NamedCell(const std::string& checkpoint, const std::string& scenario,
               const std::string& config) {
  Cell cell;
  cell.checkpoint = checkpoint;
  cell.scenario = scenario;
  cell.config.name = config;
  return cell;
}

TEST(Matrix, DumpFileNamesAreSafeAndDistinct) {
  // Plain names are kept as they are.
  EXPECT_EQ(DumpFileName(NamedCell("tiny", "classic", "cpu-t3")), "tiny.classic.cpu-t3.f32");
  // Anything else becomes '_' plus a hash of the original names.
  const std::string a = DumpFileName(NamedCell("synthetic:tiny", "classic", "cpu-t3"));
  const std::string b = DumpFileName(NamedCell("synthetic/tiny", "classic", "cpu-t3"));
  const std::string c = DumpFileName(NamedCell("../../etc/passwd", "x y", "cpu-t1"));
  EXPECT_EQ(a.rfind("synthetic_tiny.classic.cpu-t3-", 0), 0u) << a;
  EXPECT_NE(a, b);
  for (const std::string& name : {a, b, c}) {
    EXPECT_EQ(name.find('/'), std::string::npos) << name;
    EXPECT_EQ(name.find(' '), std::string::npos) << name;
    EXPECT_NE(name.front(), '.') << name;
    EXPECT_TRUE(name.ends_with(".f32")) << name;
  }
  // A long checkpoint path is cut, keeping the configuration's name.
  const std::string long_name =
      DumpFileName(NamedCell("/" + std::string(300, 'd') + "/model.safetensors", "s", "cpu-t2"));
  EXPECT_LE(long_name.size(), 120u + 1 + 16 + 4);
  EXPECT_NE(long_name.find("cpu-t2-"), std::string::npos) << long_name;
}

}  // namespace
}  // namespace samebits::runner
