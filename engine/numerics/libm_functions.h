// The platform C library's f32 transcendentals, as function pointers taken
// from the real symbols (engine-internal; see math.h for the profiles).
#pragma once

namespace samebits::numerics {

struct LibmFunctions {
  float (*exp)(float);
  float (*log)(float);
  float (*sin)(float);
  float (*cos)(float);
  float (*tanh)(float);
  float (*pow)(float, float);
};

// Returns pointers to ::expf, ::logf, ::sinf, ::cosf, ::tanhf and ::powf.
const LibmFunctions& GetLibmFunctions();

}  // namespace samebits::numerics
