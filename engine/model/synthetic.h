// Synthetic checkpoints: shapes named `tiny`, `medium`, `wide` and `bench`,
// whose weights come from an integer counter-based generator (no libm, no
// platform-dependent step), so the same bits come out on every machine and
// no file is needed. Documented in engine/model/README.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/weights.h"

namespace samebits::model {

inline constexpr uint64_t kSyntheticSeed = 0x5a3eb175ULL;

// Returns the synthetic shape names, smallest first.
std::vector<std::string> SyntheticNames();

// Returns the configuration of a synthetic shape. Throws
// std::invalid_argument naming the known shapes when `name` is unknown.
ModelConfig SyntheticConfig(const std::string& name);

// Returns generated weights for a synthetic shape. Matrices and the
// embedding are stored in `dtype` (rounded to nearest even from the
// generator's f32 values); norms and the router stay F32.
ModelWeights MakeSyntheticWeights(const std::string& name, DType dtype,
                                  uint64_t seed = kSyntheticSeed);

}  // namespace samebits::model
