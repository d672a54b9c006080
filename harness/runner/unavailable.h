// Cells this machine can never run, as the engine says: one probe call per
// run (the profile's `probe`, a `capabilities` record, PROTOCOL.md) names
// the axis values the engine cannot run here (NEON on x86-64), and a
// default selection leaves their cells out with one line saying which and
// why, instead of a child or an UNSUPPORTED line per cell. A selection that
// names configurations keeps them, each marked UNSUPPORTED with the
// engine's reason before any child starts. The harness keeps no list of
// its own: the engine that runs the cells says what it can run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/protocol/records.h"
#include "harness/runner/matrix.h"
#include "harness/runner/matrix_run.h"

namespace samebits::runner {

// Returns the engine's `capabilities` record from running `engine` with
// `probe_argv`, or nothing (with `*why` saying what went wrong) when the
// probe did not exit 0 with exactly that one record. The probe runs once
// per process for one program file as it is (path, inode, size and
// modification time) and argv; later calls get its answer.
std::optional<protocol::Capabilities> ProbeEngine(const std::string& engine,
                                                  const std::vector<std::string>& probe_argv,
                                                  std::string* why);

// Removes from `cells` those whose configuration takes a value the engine
// says it cannot run (axis "isa" is the configuration's ISA; other axes are
// not configurations of samebits-engine's matrix and leave nothing out).
// Returns one line per value that left cells out: "left out 128 cells of
// cpu-neon: this machine (x86_64) or this build lacks neon".
std::vector<std::string> LeaveOutUnavailable(std::vector<Cell>& cells,
                                             const protocol::Capabilities& capabilities);

// Returns the entry of `capabilities` that says the engine cannot run
// `config` here (its ISA), or nullptr.
const protocol::Unavailable* UnavailableValueOf(const harness::Configuration& config,
                                                const protocol::Capabilities& capabilities);

// Marks UNSUPPORTED, with the engine's reason, the cells whose
// configuration takes a value the engine says it cannot run (the axes as
// for LeaveOutUnavailable); the cells stay, in their order.
void MarkUnavailable(std::vector<Cell>& cells, const protocol::Capabilities& capabilities);

// Returns the cells `options.selection` selects (SelectCells), asking the
// engine's probe (when `options.probe` is set) what it can never run here:
// a selection that names no configuration goes without those cells, with
// one line per value left out in `*notes`; one that names configurations
// keeps them, marked UNSUPPORTED (MarkUnavailable). When the probe fails,
// a line in `*notes` says so, nothing is left out or marked, and each
// cell's child answers for itself.
std::vector<Cell> SelectRunnableCells(const MatrixRunOptions& options,
                                      std::vector<std::string>* notes);

}  // namespace samebits::runner
