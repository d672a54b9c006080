// A small portable + libm matrix over the stand-in engine
// (tests/standins/standin_engine.cc), run through the real `samebits`, for
// the tests of the gate's diagnosis and of export, import and compare.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/store/store.h"
#include "tests/harness/standin_helpers.h"

namespace samebits::standin {

class StandinMatrix {
 public:
  explicit StandinMatrix(const std::string& name)
      : dir_(name), scenario_(WriteScenario(dir_.path())) {}

  // Returns the result of `samebits <words>` over the matrix, with the
  // stand-in under `fault` as the engine, storing into `db` (a file name
  // under the test's folder).
  CommandResult Matrix(std::vector<std::string> words, const std::string& fault,
                       const std::string& db = "runs.db") {
    std::vector<std::string> argv = {BinDir() + "/samebits"};
    argv.insert(argv.end(), words.begin(), words.end());
    const std::vector<std::string> matrix = {"--engine",
                                             FaultyEngine(dir_.path(), fault),
                                             "--checkpoint",
                                             "synthetic:tiny",
                                             "--scenario",
                                             scenario_,
                                             "--math",
                                             "portable,libm",
                                             "--config",
                                             "cpu-t1,cpu-t2,cpu-t1-libm,cpu-t2-libm",
                                             "--timeout",
                                             "20",
                                             "-j",
                                             "2",
                                             "--db",
                                             Path(db),
                                             "--references-dir",
                                             Path("references"),
                                             "-q"};
    argv.insert(argv.end(), matrix.begin(), matrix.end());
    return RunCommand(argv);
  }

  // Runs the matrix with `fault` into `db` and exports its run to `bundle`
  // (file names under the test's folder), asserting that both ran.
  void RunAndExport(const std::string& fault, const std::string& db, const std::string& bundle) {
    const CommandResult run = Matrix({"run"}, fault, db);
    ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.command << "\n" << run.output;
    const CommandResult out = Samebits({"export", "-o", Path(bundle), "--db", Path(db)});
    ASSERT_EQ(out.exit_code, 0) << out.output;
  }

  // Returns the result of `samebits <words>` as they are.
  CommandResult Samebits(std::vector<std::string> words) {
    std::vector<std::string> argv = {BinDir() + "/samebits"};
    argv.insert(argv.end(), words.begin(), words.end());
    return RunCommand(argv);
  }

  harness::RunResult Latest(const std::string& db = "runs.db") {
    store::Store store(Path(db));
    return store.LoadRun(store.LatestRunId());
  }

  std::string Path(const std::string& name) const { return (dir_.path() / name).string(); }

 private:
  TempDir dir_;
  std::string scenario_;
};

}  // namespace samebits::standin
