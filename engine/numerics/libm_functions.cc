// Kept in a file of its own so that the only thing this translation unit
// does with the C library's functions is take their addresses: calls made
// through these pointers go to whatever `expf` the dynamic linker bound
// (the system libm, or an LD_PRELOAD stand-in), never to a compiler
// builtin that was inlined or constant-folded.
#include "engine/numerics/libm_functions.h"

#include <math.h>

namespace samebits::numerics {

const LibmFunctions& GetLibmFunctions() {
  static const LibmFunctions functions = {&::expf, &::logf, &::sinf, &::cosf, &::tanhf, &::powf};
  return functions;
}

}  // namespace samebits::numerics
