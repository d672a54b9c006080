// Running a determinism card (`samebits card`, harness/analysis/card.h):
// the engine's card baseline and, one axis at a time, each value its
// profile says to try, on every checkpoint and scenario asked for, each
// configuration a child of its own (profile_cell.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/analysis/card.h"
#include "harness/runner/child.h"
#include "harness/runner/engine_profile.h"
#include "harness/runner/profile_matrix.h"

namespace samebits::runner {

// One configuration the card runs: `axis` set to `value` on the card
// baseline.
using CardVariant = AxisVariant;

// Returns the variants of `profile`'s card in axis order: OneAxisAtATime
// from the card baseline (profile_matrix.h).
std::vector<CardVariant> CardVariants(const EngineProfile& profile,
                                      std::vector<std::string>* notes);

struct CardOptions {
  std::vector<std::string> checkpoints;     // engine checkpoint specs
  std::vector<std::string> scenario_files;  // paths
  std::string program;                      // the engine to run
  double timeout_seconds = 120;
  // An existing folder for the children's raw logit dumps (when the profile
  // can dump), so differing rows say how much they differ; "" for none.
  std::string dump_dir;
  std::vector<std::string> passthrough = DefaultPassthrough();
  // samebits-engine, to measure the baseline's conformance to its reference
  // pass on each checkpoint and scenario (needs the profile's dump_logits
  // and `dump_dir`); "" to leave it out.
  std::string reference_program;
  // samebits-engine's profile (engines/samebits.json), which builds the
  // reference pass's argv; required with `reference_program`.
  std::shared_ptr<const EngineProfile> reference_profile;
  // The feed table (`card --feed`): three scenario files that feed the same
  // tokens at the same positions, the prompt whole, as a prefill and one
  // extend, and token by token (scenarios/chunk-prefill-12, chunk-extend-6,
  // chunk-extend-1x6), run at the card baseline and compared row by row
  // with the first (rows kFeedTableAxis kFeedExtend and kFeedToken of
  // engine_profile.h); empty for no feed table.
  std::vector<std::string> feed_scenario_files;
};

// Returns the card of `profile`'s engine.
harness::Card RunCard(const EngineProfile& profile, const CardOptions& options);

}  // namespace samebits::runner
