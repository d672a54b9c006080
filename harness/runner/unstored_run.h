// A run that is not stored leaves nothing behind: its raw logit dumps (60 MB
// for 84 cells; for a server store, a folder inside the project checkout)
// would otherwise stay under the dumps folder with no run pointing at them.
// Every command that makes a run and stores it (run, gate, reference
// generate) holds one guard from the moment the run exists until the store
// has it; any other way out (an unrunnable selection, a store that fails or
// turns read-only, an exception) removes the run's dump files and their
// folders once empty.
#pragma once

#include <string>

#include "harness/analysis/results.h"

namespace samebits::runner {

class UnstoredRunFiles {
 public:
  // Watches `run` (its cells' `dump_path`s, relative to `root` when not
  // absolute, as the store keeps them); `run` must outlive the guard.
  UnstoredRunFiles(const harness::RunResult& run, std::string root)
      : run_(run), root_(std::move(root)) {}
  UnstoredRunFiles(const UnstoredRunFiles&) = delete;
  UnstoredRunFiles& operator=(const UnstoredRunFiles&) = delete;
  // Removes the run's dumps unless Stored() was called.
  ~UnstoredRunFiles();

  // Says the store holds the run: its files stay.
  void Stored() { stored_ = true; }

 private:
  const harness::RunResult& run_;
  std::string root_;
  bool stored_ = false;
};

// Removes the dump files of `run`'s cells (paths relative to `root` when not
// absolute) and each folder that holds one once it is empty.
void RemoveRunDumps(const harness::RunResult& run, const std::string& root);

}  // namespace samebits::runner
