// The libm stand-in (tests/standins/libm_standin.cc, loaded with LD_PRELOAD)
// against the REAL engine, through the real harness: a math library that
// rounds `expf` differently by one ulp on some inputs must change the libm
// profile's hashes and fingerprint, be diagnosed by the gate as "math
// library differs", and leave the portable profile's hashes untouched
// (its transcendentals are the engine's own).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/store/store.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::standin {
namespace {

using harness::Diagnosis;
using harness::ResultCode;

std::string Preload() {
  return std::string(SAMEBITS_BINARY_DIR) + "/lib/libsamebits-libm-standin.so";
}

class StandinLibm : public ::testing::Test {
 protected:
  StandinLibm() : dir_("standin_libm") {}

  // Returns the result of `samebits <words>` over the small libm/portable
  // matrix, with `env` (e.g. LD_PRELOAD=...) before the command.
  CommandResult Samebits(std::vector<std::string> words, const std::string& env = "") {
    std::vector<std::string> argv = {BinDir() + "/samebits"};
    argv.insert(argv.end(), words.begin(), words.end());
    const std::vector<std::string> matrix = {
        "--engine",
        BinDir() + "/samebits-engine",
        "--checkpoint",
        "synthetic:tiny",
        "--scenario",
        std::string(SAMEBITS_SOURCE_DIR) + "/scenarios/classic.json",
        "--math",
        "portable,libm",
        "--config",
        "cpu-t1,cpu-t2,cpu-t1-libm,cpu-t2-libm",
        "--timeout",
        "60",
        "-j",
        "2",
        "--db",
        (dir_.path() / "runs.db").string(),
        "--references-dir",
        (dir_.path() / "references").string(),
        "-q"};
    argv.insert(argv.end(), matrix.begin(), matrix.end());
    return RunCommand(argv, env);
  }

  harness::RunResult Latest() {
    store::Store store((dir_.path() / "runs.db").string());
    return store.LoadRun(store.LatestRunId());
  }

  TempDir dir_;
};

// Returns each cell's steps by configuration name.
std::map<std::string, const harness::CellResult*> ByConfig(const harness::RunResult& run) {
  std::map<std::string, const harness::CellResult*> out;
  for (const auto& c : run.cells) out[c.config.name] = &c;
  return out;
}

TEST_F(StandinLibm, EngineCallsTheDynamicExpf) {
  // LD_PRELOAD can only interpose a function the engine imports.
  const CommandResult nm = RunCommand({"nm", "-D", BinDir() + "/samebits-engine"});
  if (nm.exit_code != 0) GTEST_SKIP() << "nm is not available: " << nm.output;
  EXPECT_NE(nm.output.find(" U expf"), std::string::npos) << nm.output;
}

TEST_F(StandinLibm, PreloadedLibmIsDiagnosedAndPortableIsUntouched) {
  const CommandResult made = Samebits({"reference", "generate"});
  ASSERT_EQ(made.exit_code, 0) << made.command << "\n" << made.output;
  const CommandResult clean = Samebits({"gate"});
  ASSERT_EQ(clean.exit_code, 0) << clean.output;
  const harness::RunResult before = Latest();

  const CommandResult preloaded = Samebits({"gate"}, "LD_PRELOAD=" + ShellQuote(Preload()));
  EXPECT_EQ(preloaded.exit_code, 1) << preloaded.output;
  const harness::RunResult after = Latest();
  ASSERT_NE(before.run_id, after.run_id);
  EXPECT_EQ(after.diagnosis.kind, Diagnosis::Kind::kMathLibraryDiffers)
      << after.diagnosis.headline << "\n"
      << preloaded.output;

  const auto b = ByConfig(before), a = ByConfig(after);
  for (const std::string name : {"cpu-t1-libm", "cpu-t2-libm"}) {
    ASSERT_TRUE(a.count(name) && b.count(name)) << name;
    const harness::CellResult& x = *b.at(name);
    const harness::CellResult& y = *a.at(name);
    EXPECT_EQ(y.code, ResultCode::kFail) << name;
    ASSERT_TRUE(x.math && y.math);
    EXPECT_NE(x.math->fingerprint, y.math->fingerprint) << name;
    ASSERT_EQ(x.steps.size(), y.steps.size());
    int changed = 0;
    for (size_t i = 0; i < x.steps.size(); ++i) changed += x.steps[i].xxh3_64 != y.steps[i].xxh3_64;
    EXPECT_GT(changed, 0) << name << ": the preloaded expf changed no hash";
  }
  for (const std::string name : {"cpu-t1", "cpu-t2"}) {
    ASSERT_TRUE(a.count(name) && b.count(name)) << name;
    const harness::CellResult& x = *b.at(name);
    const harness::CellResult& y = *a.at(name);
    EXPECT_EQ(y.code, ResultCode::kPass) << name;
    EXPECT_EQ(x.math->fingerprint, y.math->fingerprint) << name;
    ASSERT_EQ(x.steps.size(), y.steps.size());
    for (size_t i = 0; i < x.steps.size(); ++i) {
      EXPECT_EQ(x.steps[i].fnv1a64, y.steps[i].fnv1a64) << name << " step " << i;
      EXPECT_EQ(x.steps[i].xxh3_64, y.steps[i].xxh3_64) << name << " step " << i;
    }
  }
}

}  // namespace
}  // namespace samebits::standin
