// Runs one cell of the matrix as a child and judges what it printed: a
// child that crashes, hangs, prints garbage, omits `done`, exits non-zero or
// ran another configuration than asked never counts as a pass.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/protocol/records.h"
#include "harness/analysis/results.h"
#include "harness/runner/child.h"
#include "harness/runner/engine_profile.h"
#include "harness/runner/matrix.h"

namespace samebits::runner {

struct RunnerOptions {
  std::string engine;            // the program that speaks PROTOCOL.md
  double timeout_seconds = 120;  // per child
  bool trace = false;            // pass --trace
  // When not empty, an existing folder: each child writes its raw logits
  // to <dump_dir>/<DumpFileName(cell)> (--dump-logits), and a cell that
  // passes with a dump of one row per step gets that path as its
  // `dump_path` (an engine that ignored the flag leaves it empty).
  std::string dump_dir;
  // When not empty, an existing folder where children cache the synthetic
  // checkpoints they synthesise (SAMEBITS_SYNTHETIC_CACHE; samebits-engine
  // reads them back, checked by hash, instead of synthesising each again).
  std::string synthetic_cache_dir;
  // Names of this process's environment variables passed to children.
  std::vector<std::string> passthrough = DefaultPassthrough();
  // The engine's profile when it is not samebits-engine (engines/NAME.json):
  // the cells' arguments and hello are then the profile's (profile_cell.h).
  const EngineProfile* profile = nullptr;
  // samebits-engine's profile (engines/samebits.json) when `profile` is
  // null: the cells' arguments are built from it (cell_arguments.h), and
  // their hello is checked against their configuration's fields. A cell
  // run without either is UNRESOLVED.
  const EngineProfile* own_profile = nullptr;
  // Up to this many cells of one configuration share a child, when the
  // engine serves several (`run --serve`, its `capabilities` record says
  // so; shared_child.h); 1: one child per cell.
  int cells_per_child = 1;
};

// Returns the cell's result from a finished child. The code is PASS (so
// far: the analysis compares hashes later), UNSUPPORTED, UNRESOLVED or
// TIMEOUT. Every claim of the child that can be checked is checked
// (engine_claims.h: its steps against its scenario and, when `dump_file` is
// not empty, the raw logit dump it was asked to write there against its
// steps and hello); the result keeps the dump only when they all hold.
// When `platform` is given and the child said hello, it receives the
// machine the child described.
// With `own_profile` (engines/samebits.json), the hello must also echo
// what that profile promises for the cell's configuration.
harness::CellResult JudgeChild(const Cell& cell, const ChildOutcome& outcome,
                               harness::MachineInfo* platform = nullptr,
                               const std::string& dump_file = "",
                               const EngineProfile* own_profile = nullptr);

// Returns why a finished child's `hello` does not echo what its cell asked
// for, or "" when it does; given the transcript (its hello present) and
// the child's whole stdout (the hello's raw line is its first).
using HelloCheck =
    std::function<std::string(const protocol::Transcript& t, const std::string& stdout_text)>;

// Returns the cell's result as JudgeChild does, with the hello checked by
// `hello_check` instead of the fields of `Configuration` (an engine profile's
// echo, engine_profile.h).
harness::CellResult JudgeChildWith(const Cell& cell, const ChildOutcome& outcome,
                                   const HelloCheck& hello_check,
                                   harness::MachineInfo* platform = nullptr,
                                   const std::string& dump_file = "");

// Returns the result of running `cell` (UNSUPPORTED without a child when
// the machine lacks the cell's ISA).
harness::CellResult RunCell(const Cell& cell, const RunnerOptions& options,
                            harness::MachineInfo* platform = nullptr);

// Returns samebits-engine's argv for `cell` (options.own_profile's, with
// options.trace and `dump_file`). Throws std::invalid_argument, saying why,
// when there is no such profile or its grammar does not read the cell's
// configuration name.
std::vector<std::string> OwnEngineArguments(const Cell& cell, const RunnerOptions& options,
                                            const std::string& dump_file);

// Returns the file `cell` dumps its logits to under `options.dump_dir`, or
// "" when the run keeps no dumps.
std::string CellDumpFile(const Cell& cell, const RunnerOptions& options);

// Returns the child RunCell starts for samebits-engine's `cell`, given its
// argv: the program, the cell's variables and the run's timeout.
ChildSpec CellChildSpec(const Cell& cell, const RunnerOptions& options,
                        std::vector<std::string> args);

// Returns the result of `cell` from its finished child as RunCell judges
// it (JudgeChild with its dump and its profile's echo, and the time judging
// took).
harness::CellResult JudgeCellChild(const Cell& cell, const ChildOutcome& outcome,
                                   const std::string& dump_file, const EngineProfile* own_profile,
                                   harness::MachineInfo* platform = nullptr);

// Returns the variables set explicitly for a cell's child: those that would
// change a result if inherited (SAMEBITS_THREADS, ...).
std::map<std::string, std::string> CellVariables(const Cell& cell);

}  // namespace samebits::runner
