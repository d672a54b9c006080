// Helpers for the formats tests: where the shared real checkpoints live,
// reading files, a scratch directory, and running the reference pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/model/weights.h"
#include "tests/support/data_folder.h"

namespace samebits::formats::testing {

// Returns the folder of real checkpoints (../shared/checkpoints beside the clone).
std::string CheckpointsDir();
// Returns the path of shared checkpoint file `name`.
std::string Checkpoint(const std::string& name);
// Returns true when the shared checkpoints are present (tests skip otherwise:
// SKIP_WITHOUT_CHECKPOINTS).
bool HaveCheckpoints();

// Returns the bytes of the file at `path` (fails the test when unreadable).
std::vector<std::byte> ReadBytes(const std::string& path);
// Writes `bytes` to `path`.
void WriteBytes(const std::string& path, const std::vector<std::byte>& bytes);
// Returns a fresh empty scratch directory for test `name`.
std::string ScratchDir(const std::string& name);

// Returns DIR/config.json (a safetensors folder's), parsed.
nlohmann::json ReadConfig(const std::string& dir);
// Writes `j` as DIR/config.json.
void WriteConfig(const std::string& dir, const nlohmann::json& j);
// Returns the message of the CheckpointError that loading `spec` throws
// ("" if none).
std::string LoadError(const std::string& spec);

// Returns the logits of every position, the tokens fed one per call to the
// reference pass (portable math), one row of vocab_size floats per token.
std::vector<std::vector<float>> ReferenceLogits(
    const model::ModelWeights& w, const std::vector<int32_t>& tokens,
    numerics::QuantDot quant_dot = numerics::QuantDot::kExact);
// The same through the cpu pass with `threads` threads on `isa`'s kernels.
std::vector<std::vector<float>> CpuLogits(const model::ModelWeights& w,
                                          const std::vector<int32_t>& tokens, int threads,
                                          numerics::QuantDot quant_dot = numerics::QuantDot::kExact,
                                          kernels::Isa isa = kernels::Isa::kScalar);

// Returns true when both have the same bits at every position.
// Returns every value of `v` as F32.
std::vector<float> TensorValues(const model::TensorView& v);

bool SameBits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b);

// Expects `b` to be `a` again: the same weights hash, configuration
// (name included) and reference-pass logits, bit for bit, on a few tokens.
void ExpectSameModel(const model::ModelWeights& a, const model::ModelWeights& b);

// Returns the sequence the llama.cpp dumps were made with: BOS 1, then
// 3 + (37*i + 11) % (n_vocab - 3) for i = 0..19.
std::vector<int32_t> LlamaCppTokens(int n_vocab);

}  // namespace samebits::formats::testing

// Skips the calling test when the shared checkpoints are absent, with the
// data folder's marker (tests/support/data_folder.h).
#define SKIP_WITHOUT_CHECKPOINTS() \
  SAMEBITS_SKIP_WITHOUT_DATA(::samebits::formats::testing::CheckpointsDir())
