// The names of the selection flags that expand samebits-engine's default
// matrix (`run`, `gate`, `bisect`, `reference`), written once: the CLI
// declares them by these constants, and the messages that name them and the
// command lines the harness prints for a person to run spell them from
// here. samebits-engine's own flags are not here: its argv is built from
// its profile (engines/samebits.json, cell_arguments.h).
#pragma once

namespace samebits::runner {

// One cpu-tN configuration per thread count.
inline constexpr const char* kThreadsFlag = "--threads";
// The math profiles each configuration runs under.
inline constexpr const char* kMathFlag = "--math";
// The quantized dot-product profiles each configuration runs under.
inline constexpr const char* kQuantDotFlag = "--quant-dot";

}  // namespace samebits::runner
