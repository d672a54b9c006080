// Helpers for the tests that run the real `samebits` program against the
// stand-ins in tests/standins: running a command, temporary folders, and
// the stand-in engine under a fault's name.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::standin {

// Returns the folder holding the built programs (build/bin).
std::string BinDir();

// Returns `path` (relative to the source tree) under the source tree.
std::string Source(const std::string& path);

// Returns `s` quoted for /bin/sh.
std::string ShellQuote(const std::string& s);

// The configurations most stand-in gates run: the reference pass and two
// thread counts.
inline constexpr const char* kReferenceAndTwoThreadCounts = "reference,cpu-t1,cpu-t3";

// Returns a diagnosis's headline and details, one per line.
std::string DiagnosisText(const harness::Diagnosis& d);

// Returns the bytes of `path` ("" when missing).
std::string FileBytes(const std::filesystem::path& path);

struct CommandResult {
  std::string command;
  int exit_code = -1;  // -1 when killed by a signal
  std::string output;  // stdout and stderr together
};

// Returns the result of running `argv` through /bin/sh, after
// `env_prefix` (such as "LD_PRELOAD=/x.so"; empty for none).
CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& env_prefix = "");

// A fresh folder under the system's temporary folder, removed at the end
// unless SAMEBITS_KEEP_TEMP is set (for looking at a failure).
class TempDir {
 public:
  explicit TempDir(const std::string& name);
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Returns a path under `dir` that runs the stand-in engine with `fault`: a
// symlink named samebits-standin-engine-<fault>, because the harness gives
// children a clean environment (SAMEBITS_STANDIN_FAULT would not arrive).
std::string FaultyEngine(const std::filesystem::path& dir, const std::string& fault);

// Returns the newest run in the store at `db`.
harness::RunResult LatestRun(const std::string& db);

// Returns the cell of `run` with configuration `config`, or nullptr.
const harness::CellResult* FindCell(const harness::RunResult& run, const std::string& config);
// A cell of a temporary run would dangle at the end of the statement (ASan
// found two such reads): keep the run in a variable.
const harness::CellResult* FindCell(harness::RunResult&& run, const std::string& config) = delete;

// For the stand-in servers told --pid-dir=`pid_dir` (each writes
// standin-PID.pid there): how many started, and how many of those are still
// running (a process whose command line still names standin_server.py).
std::pair<int, int> StandinServersStartedAndLeft(const std::filesystem::path& pid_dir);

// Returns the code the newest run of `db` stored for configuration
// `config`, or "(no cell CONFIG)".
std::string StoredCode(const std::string& db, const std::string& config);

// An engine profile's matrix gated against its own baseline (for engines
// whose bits depend on their build, so no reference is committed): each
// step's result; a step not reached keeps exit code -1.
struct ProfileGate {
  CommandResult run, generate, gate;
};

// Runs `samebits run --engine ENGINE --db DB` on `checkpoint` and scenario
// classic with logit dumps; when it passes, writes a reference from the
// run's baseline into `references_dir` (`reference generate`, which writes
// only when every configuration agrees with the baseline or differs as
// declared); when that passes, gates the run against it.
ProfileGate GateAgainstOwnBaseline(const std::string& engine, const std::string& db,
                                   const std::string& checkpoint,
                                   const std::string& references_dir);

// samebits' reference pass over `checkpoint` and the classic scenario,
// stored in `reference_db`, then `samebits conform` of it against the
// configuration t1 stored in `engine_db` (--max-nmse 1e-4): each step's
// result; `conform` keeps exit code -1 when the reference pass failed.
// Writes samebits-engine's profile (engines/samebits.json) into `dir` with
// its command pointed at this build's engine (the profile's own names the
// build/ folder of the source tree), and returns the file.
std::string OwnEngineProfile(const std::filesystem::path& dir);

struct ReferenceConformance {
  CommandResult reference, conform;
};
// Runs samebits' reference pass on `checkpoint` and `scenario` (from
// `scenarios_dir`; default: the tree's scenarios/) into `reference_db`,
// then `samebits conform` of it against `engine_db`'s t1 cell (NMSE <= 1e-4).
ReferenceConformance ConformT1ToReferencePass(const std::string& checkpoint,
                                              const std::string& reference_db,
                                              const std::string& engine_db,
                                              const std::string& scenario = "classic",
                                              const std::string& scenarios_dir = "");

// Writes a scenario file for the stand-in under `dir`. Returns its path.
std::string WriteScenario(const std::filesystem::path& dir);

}  // namespace samebits::standin
