// Tensor names of the Hugging Face layout <-> the engine's GGUF-convention
// names. Per-expert HF tensors map to `blk.N.ffn_gate.E.weight` (the
// per-expert GGUF form), which the binder gathers into 3-D expert tensors.
#pragma once

#include <string>

namespace samebits::formats {

// The tensor naming (and MoE keys) of a transformers class; which class has
// which family is architectures.h's table.
enum class HfFamily { kLlama, kMixtral, kQwen3Moe };

// Returns the engine name of HF tensor `hf` ("" when it is unknown).
// Names `samebits.X` (our writer's, for tensors HF has no name for) map to X.
std::string GgufNameFromHf(const std::string& hf);

// Returns the HF name of engine tensor `name`; for an expert tensor
// (`..._exps.weight`), that of expert `expert` in `family`'s naming.
std::string HfNameFromGguf(const std::string& name, HfFamily family, int expert);

}  // namespace samebits::formats
