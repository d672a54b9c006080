// A kernel table that breaks the contract on purpose, for negative controls
// only: tests use it to show that the identity checks can fail. It lives in
// the engine (not in tests/) because the identity tests run the engine
// binary, which selects it only when SAMEBITS_TEST_ONLY_BREAK_IDENTITY=1 is
// set (engine/model/forward_cpu.cc); no production signature carries a
// test switch.
#pragma once

#include "engine/kernels/kernels.h"

namespace samebits::kernels {

// Returns `isa`'s table with one change: attention_values sums V from the
// last key to the first, an order C5 forbids, so its logits differ from the
// reference. Throws std::invalid_argument when `isa` is not available.
const KernelTable& TestOnlyReversedAttentionTable(Isa isa);

}  // namespace samebits::kernels
