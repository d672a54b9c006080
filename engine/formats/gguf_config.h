// GGUF metadata <-> ModelConfig. The standard keys are llama.cpp's
// (`{arch}.embedding_length`, `{arch}.attention.head_count`, ...); features
// llama.cpp has no key for live under `samebits.*` (see gguf_writer.h),
// which only this engine honours.
#pragma once

#include <memory>

#include "engine/formats/gguf.h"
#include "engine/formats/vocabulary.h"
#include "engine/model/config.h"

namespace samebits::formats {

// Keys of the samebits namespace (written by WriteGguf, read here).
inline constexpr const char* kSbVersion = "samebits.version";
inline constexpr const char* kSbRopeStyle = "samebits.rope.style";  // "interleaved" | "neox"
inline constexpr const char* kSbRopeDim =
    "samebits.rope.dimension_count";                     // raw `rope_dim` (0: head_dim)
inline constexpr const char* kSbNorm = "samebits.norm";  // "rms" | "layer"
inline constexpr const char* kSbQkNorm = "samebits.attention.qk_norm";    // bool
inline constexpr const char* kSbQkvBias = "samebits.attention.qkv_bias";  // bool
inline constexpr const char* kSbParallel = "samebits.parallel_block";     // bool
inline constexpr const char* kSbLogitScale = "samebits.logit_scale";      // float32
inline constexpr const char* kSbDenseFfn =
    "samebits.feed_forward_length";  // dense FFN beside experts
inline constexpr const char* kSbRenorm = "samebits.expert_weights_norm";    // bool
inline constexpr const char* kSbSliding = "samebits.layer.sliding_window";  // int32 per layer
inline constexpr const char* kSbUseRope = "samebits.layer.use_rope";        // bool per layer
inline constexpr const char* kSbMoe = "samebits.layer.moe";                 // bool per layer
inline constexpr const char* kSbName = "samebits.name";                     // config name

// Returns the configuration the metadata and tensor table of `f` describe
// (not yet validated). Throws CheckpointError naming the file for a missing
// required key, a key of the wrong type or an unsupported architecture.
model::ModelConfig GgufToConfig(const GgufFile& f);

// Returns the vocabulary of `f`: SentencePiece (`tokenizer.ggml.model` =
// "llama") or byte-level BPE ("gpt2", with `merges` and `pre`); null when
// the file has none or another tokenizer model. Throws CheckpointError when
// the tokenizer keys are malformed or the piece count differs from
// `vocab_size` (-1: any count, for vocabulary-only files). A BPE
// pre-tokenizer this engine does not know gives null for a model (which
// still runs token scenarios) and an error naming the known ones for a
// vocabulary read on its own (`vocab_size` -1).
std::shared_ptr<const Vocabulary> GgufVocabulary(const GgufFile& f, int vocab_size);

}  // namespace samebits::formats
