// Which cells a run makes: the selection flags of `run`, `gate` and
// `reference generate` (checkpoints, scenarios, a suite, configurations)
// turned into the matrix and suite cells, in matrix order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/runner/engine_profile.h"
#include "harness/runner/matrix.h"

namespace samebits::runner {

struct Selection {
  std::vector<std::string> checkpoints;  // specs; empty: the defaults
  std::vector<std::string> scenarios;    // names or paths; empty: every one
  std::string suite;                     // a suite file (suite.h); empty: none given
  std::string scenarios_dir;             // empty: `project_scenarios`
  std::vector<std::string> configs;      // names to keep; empty: all
  std::vector<int> threads = {1, 2, 3};
  std::vector<std::string> math = {"portable"};
  std::vector<std::string> quant_dot = {"exact"};
  // The project: a suite's checkpoints resolve against `root`, and its
  // scenarios folder holds the default scenarios and real/suite.json.
  std::string root;
  std::string project_scenarios;
  // samebits-engine's profile (engines/samebits.json, or the file given
  // with --engine-profile): its `matrix` is the default matrix. Required
  // unless `profile` is set.
  std::shared_ptr<const EngineProfile> own_profile;
  // The engine's profile when it is not samebits-engine: the cells are then
  // the profile's matrix (profile_matrix.h) of the checkpoints and
  // scenarios named (default: the profile's `matrix`, else the scenarios
  // folder) and the configurations named (parsed by the profile's grammar;
  // default: DefaultProfileConfigurations). `threads`, `math` and
  // `quant_dot` are samebits-engine's and do not apply.
  std::shared_ptr<const EngineProfile> profile;
};

// Returns the suite run when no selection is given:
// <project_scenarios>/real/suite.json.
std::string DefaultSuitePath(const Selection& selection);

// Returns the cells `selection` selects: with a suite, the suite's pairs
// (narrowed by the checkpoints and scenarios); with no checkpoint,
// scenario, scenarios folder or suite, the synthetic matrix and then the
// default suite; otherwise the matrix of the checkpoints and scenarios
// named, except that a checkpoint the default suite lists selects its pairs
// in the suite (narrowed by the scenarios). Throws RunError (exit 2) for a
// selection that cannot be run, or a profile whose matrix cannot be
// expanded (its file, key and what was expected).
std::vector<Cell> SelectCells(const Selection& selection);

// Returns the runnable cell behind a stored or fresh cell result: the cell
// of that name in `selected` when there is one (it knows a suite's scenario
// file and resolved checkpoint), else one made from the scenarios folder.
Cell CellForResult(const harness::CellResult& result, const Selection& selection,
                   const std::vector<Cell>& selected);

}  // namespace samebits::runner
