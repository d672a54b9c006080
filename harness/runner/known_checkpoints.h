// Refusing a checkpoint that cannot run before any cell runs (issue 43,
// class 4): a file it names that is not there or cannot be read, or a
// `synthetic:` name the engine says it does not know (its probe's
// `capabilities` record, PROTOCOL.md). Otherwise the first cells run, are
// thrown away when the engine refuses a later one, and the run says only
// that "the engine refused every cell".
#pragma once

#include <string>
#include <vector>

#include "engine/protocol/records.h"

namespace samebits::runner {

// An engine a command will give its checkpoints to, and how to ask it which
// it knows: its probe's argv (a profile's `probe`; empty: it declares none,
// and is not asked).
struct EngineToAsk {
  std::string program;
  std::vector<std::string> probe;
};

// Returns why `spec` cannot run, as far as can be told before a cell runs,
// or "" when nothing is known against it: a file it names (a bare path, or
// gguf:, safetensors: or llama2c: and a path, relative to the working
// folder) that does not exist or cannot be read; a `synthetic:` checkpoint
// that `capabilities` (null: nothing known) does not list, with those it
// does. Another engine's own `scheme:NAME` is left to that engine.
std::string CheckpointProblem(const std::string& spec, const protocol::Capabilities* capabilities);

// Throws RunError (exit 2) naming each of `specs` that CheckpointProblem
// refuses for some engine of `engines`; each engine with a probe is asked
// once. An engine whose probe fails or does not list its synthetic
// checkpoints says nothing against any: those fail at their first cell, as
// the engine's own record says.
void RefuseUnknownCheckpoints(const std::vector<std::string>& specs,
                              const std::vector<EngineToAsk>& engines);

}  // namespace samebits::runner
