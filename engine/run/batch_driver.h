// The batched scenario driver: runs a scenario's sequence with batch - 1
// companion sequences (batch_companions.h) in the same forward calls
// (model::Forward::RunBatch), and reports the scenario's sequence only:
// its steps and trace are those of the run alone, bit for bit, plus where
// each row sat in its call. With batch 1 it is RunScenario (driver.h).
#pragma once

#include "engine/model/config.h"
#include "engine/model/forward.h"
#include "engine/numerics/math.h"
#include "engine/run/batch_companions.h"
#include "engine/run/driver.h"

namespace samebits::run {

// Runs `prepared` through `forward` from a fresh state beside the
// companions `options` plans. Each scenario call (the prefill, every
// decode, every extend chunk) is one RunBatch with the companions active
// in it, in RowOrder; companions decode greedily (argmax). Steps carry
// their BatchPlace when options.batch > 1. Throws std::invalid_argument for
// a batch outside [1, kMaxBatch]; exceptions from the forward pass propagate.
RunSummary RunBatchedScenario(const PreparedScenario& prepared, const model::ModelConfig& config,
                              model::Forward& forward, const numerics::MathLibrary& math,
                              const BatchOptions& options, const DriverSinks& sinks);

}  // namespace samebits::run
