// Kernel tables that break the contract on purpose, for negative controls
// only: tests use them to show that the identity checks can fail. They live
// in the engine (not in tests/) because the identity tests run the engine
// binary, which selects them only when SAMEBITS_TEST_ONLY_BREAK_IDENTITY=1
// or SAMEBITS_TEST_ONLY_BREAK_BATCH_INVARIANCE=1 is set
// (engine/cli/commands.cc); no production signature carries a test switch.
#pragma once

#include "engine/kernels/kernels.h"

namespace samebits::kernels {

// Returns `isa`'s table with one change: attention_values sums V from the
// last key to the first, an order C5 forbids, so its logits differ from the
// reference. Throws std::invalid_argument when `isa` is not available.
const KernelTable& TestOnlyReversedAttentionTable(Isa isa);

// Returns `isa`'s table with its four matrix products (gemv, gemm and their
// quantized forms) reducing each output in two halves of k, each a whole C1
// dot product, then adding them: a reduction split across k, as engines
// pick split-K by batch size, which C1 forbids. The batch-invariance
// control runs it only for calls holding several sequences. Throws
// std::invalid_argument when `isa` is not available.
const KernelTable& TestOnlySplitReductionTable(Isa isa);

}  // namespace samebits::kernels
