// A cache of synthesised checkpoints on disk, so that the children of one
// gate synthesise each synthetic checkpoint once instead of once per cell
// (generating `wide`'s weights or quantizing `medium`'s to k-quants takes
// about a second; reading them back takes milliseconds).
//
// A cache file holds one spec's tensors exactly as synthesis made them,
// keyed by the spec and by this engine's own executable (the XXH3-64 of
// its bytes: any rebuild makes new keys, so a file never outlives the code
// that wrote it), and the weights' hash (model::HashWeights). A file is
// used only when its key matches, every offset and size fits, every tensor
// is the one the configuration implies, and the weights read back hash to
// the recorded value; anything else is a miss (the checkpoint is
// synthesised again and the file rewritten), never an error. Files are
// written under a temporary name and renamed, so concurrent children never
// read a half-written one.
#pragma once

#include <functional>
#include <string>

#include "engine/model/weights.h"

namespace samebits::formats {

// Returns the weights of the synthetic checkpoint `spec`, whose
// configuration is `config`: from the cache file in `dir` when it checks,
// else from `synthesise()`, then written to `dir` (best effort: a folder
// that cannot be written only loses the cache).
model::ModelWeights LoadSyntheticCached(const std::string& spec, const model::ModelConfig& config,
                                        const std::string& dir,
                                        const std::function<model::ModelWeights()>& synthesise);

// Returns the cache file `spec` would use in `dir` ("" when this engine
// cannot read its own executable, and so caches nothing).
std::string SyntheticCachePath(const std::string& spec, const std::string& dir);

}  // namespace samebits::formats
