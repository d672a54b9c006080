// A small portable + libm matrix over the stand-in engine
// (tests/standins/standin_engine.cc), run through the real `samebits`, for
// the tests of the gate's diagnosis and of export, import and compare.
#pragma once

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
