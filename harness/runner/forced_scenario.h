// A scenario replayed with another run's tokens (`samebits conform` and the
// card's conformance to the reference pass): where two engines' greedy (or
// sampled) continuations diverge, their later logits come from different
// contexts and cannot be compared. Rerunning side B on a scenario whose
// decode steps feed A's tokens instead of B's own choices puts both on the
// same contexts again. The scenario format cannot give a decode step a fixed
// token, so each decode becomes a single-token extend of A's fed token,
// which is one forward pass of one token emitting its row, as a decode is
// (scenarios/README.md; the chunk-* equivalences hold it to the same bits in
// samebits-engine).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::runner {

// Returns the text of scenario `scenario_json` (a scenario file's content)
// with every `{"decode": N}` step replaced by N single-token extends of the
// tokens A fed at its decode rows (`a_steps`, in order), and the name
// suffixed "-forced". The prompt, the other steps and the sampler are kept.
// Returns nothing, with `why` set, when A's decode rows do not match the
// scenario's decode counts (A ran another scenario, or failed early) or the
// text is not a scenario.
std::optional<std::string> ForcedTokenScenario(const std::string& scenario_json,
                                               const std::vector<harness::StepRecord>& a_steps,
                                               std::string* why);

// Writes the forced form of `scenario_file` for A's cell `a` into `folder`
// (as `<stem>-forced.json`) and returns what `run` gives on it: B rerun with
// A's tokens (ConformOptions::rerun_b_forced). When the forced scenario
// cannot be made or written, returns an UNRESOLVED cell saying why.
harness::CellResult RerunWithForcedTokens(
    const std::string& scenario_file, const harness::CellResult& a, const std::string& folder,
    const std::function<harness::CellResult(const std::string& forced_file)>& run);

}  // namespace samebits::runner
