// C4, the softmax, written once for the scalar paths that must give the
// reference's bits (model/reference_ops.cc's Softmax is the definition the
// tests pin them to): the maximum (exact in any order; strictly greater
// replaces, so a NaN after the first element never does), s - m, the exp,
// the C1-order sum (lanes.h) and the division.
//
// A template over the exp, so each caller passes its own (the portable or
// the libm profile's, one at a time or a table's many at once). Instantiate
// it only in files built for the baseline: in an ISA-flagged file it would
// be emitted as a weak symbol the linker may hand to baseline callers
// (engine/kernels/README.md).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/numerics/lanes.h"

namespace samebits::numerics {

// s[j] = exp(s[j] - max(s)) / sum, in place, for j in [0, n); `exp_in_place`
// is called once, as exp_in_place(s, n), on the differences.
template <class ExpInPlace>
void SoftmaxWith(float* s, int64_t n, ExpInPlace exp_in_place) {
  if (n <= 0) return;
  float m = s[0];
  for (int64_t j = 1; j < n; ++j) m = s[j] > m ? s[j] : m;
  for (int64_t j = 0; j < n; ++j) s[j] = s[j] - m;
  exp_in_place(s, n);
  const float z = Sum(s, static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) s[j] = s[j] / z;
}

}  // namespace samebits::numerics
